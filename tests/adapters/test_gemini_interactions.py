"""The Gemini Interactions API adapter: hand-written streams in the documented event shapes,
replayed through the loopback server, and the request bodies it sends (stateless and stored)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.adapters import (
    LS_SCHEMA,
    SECRET,
    WEATHER_SCHEMA,
    AdapterFactory,
    collect,
    runs_joined,
)
from tests.support.adapters import conversation as sample_conversation

from codecompanion.adapters.base import (
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from codecompanion.adapters.gemini_interactions import GeminiInteractionsAdapter
from codecompanion.errors import ProviderError, StreamInterrupted
from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.messages import Message, ToolCall
from codecompanion.streams.parser import assemble_message

TOOLS = [WEATHER_SCHEMA, LS_SCHEMA]
USAGE = {"total_input_tokens": 12, "total_output_tokens": 7, "total_tokens": 19}


def events(*items: dict[str, Any]) -> Turn:
    """An SSE stream with an `event:` line naming each event, as the API sends it."""
    return Turn.sse([f"event: {i['event_type']}\ndata: {json.dumps(i)}" for i in items])


def created(status: str = "in_progress") -> dict[str, Any]:
    interaction = {"id": "v1_abc", "status": status, "object": "interaction", "model": "m"}
    return {"event_type": "interaction.created", "interaction": interaction}


def completed(status: str = "completed") -> dict[str, Any]:
    interaction = {"id": "v1_abc", "status": status, "usage": USAGE}
    return {"event_type": "interaction.completed", "interaction": interaction}


def start(index: int, step: dict[str, Any]) -> dict[str, Any]:
    return {"event_type": "step.start", "index": index, "step": step}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"event_type": "step.delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"event_type": "step.stop", "index": index}


def call_steps(index: int, call_id: str, name: str, *pieces: str) -> list[dict[str, Any]]:
    step = {"type": "function_call", "id": call_id, "name": name, "arguments": {}}
    deltas = [delta(index, type="arguments_delta", arguments=p) for p in pieces]
    return [start(index, step), *deltas, stop(index)]


TEXT_STREAM = [
    created(),
    {
        "event_type": "interaction.status_update",
        "interaction_id": "v1_abc",
        "status": "in_progress",
    },
    start(0, {"type": "thought"}),
    delta(0, type="thought_summary", content={"type": "text", "text": "Counting."}),
    delta(0, type="thought_signature", signature="SIG"),
    stop(0),
    start(1, {"type": "model_output"}),
    delta(1, type="text", text="1, 2, "),
    delta(1, type="text", text="3"),
    stop(1),
    completed(),
]


async def test_streamed_text_thoughts_and_usage(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(events(*TEXT_STREAM))
    got = await collect(make_adapter("gemini_interactions"))
    assert runs_joined(got) == [
        ReasoningDelta("Counting."),
        TextDelta("1, 2, 3"),
        Usage(12, 7, 19),
        Finish("stop"),
    ]
    request = provider_server.requests[0]
    assert request.path == "/interactions"
    assert request.headers["x-goog-api-key"] == SECRET
    assert request.headers["api-revision"] == "2026-05-20"
    assert SECRET not in request.path + str(request.query)
    assert request.json()["stream"] is True
    assert request.json()["store"] is False


@pytest.mark.parametrize("chunk_size", [None, 1, 7])
async def test_streamed_function_calls_in_pieces(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, chunk_size: int | None
) -> None:
    body = [
        created(),
        start(0, {"type": "model_output"}),
        delta(0, type="text", text="Checking."),
        stop(0),
        *call_steps(1, "fc_1", "weather", '{"location": "Lon', 'don", "units": "celsius"}'),
        *call_steps(2, "fc_2", "ls"),
        completed("requires_action"),
    ]
    turn = events(*body)
    turn.body_chunks = [b"".join(turn.body_chunks)]
    if chunk_size:
        data = turn.body_chunks[0]
        turn.body_chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    provider_server.enqueue(turn)
    got = await collect(make_adapter("gemini_interactions"), tools=TOOLS)
    assert assemble_message(got) == {
        "content": "Checking.",
        "reasoning": None,
        "tool_calls": [
            {
                "id": "fc_1",
                "name": "weather",
                "arguments": {"location": "London", "units": "celsius"},
            },
            {"id": "fc_2", "name": "ls", "arguments": {}},
        ],
    }
    assert got[-1] == Finish("tool_calls")


async def test_a_call_with_whole_arguments_at_its_start(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    step = {"type": "function_call", "id": "fc_9", "name": "ls", "arguments": {"path": "src"}}
    provider_server.enqueue(
        events(created(), start(0, step), stop(0), completed("requires_action"))
    )
    got = await collect(make_adapter("gemini_interactions"))
    assert [e.call for e in got if isinstance(e, ToolCallEvent)] == [
        ToolCall("fc_9", "ls", {"path": "src"})
    ]


WHOLE = {
    "id": "v1_whole",
    "object": "interaction",
    "status": "requires_action",
    "usage": USAGE,
    "steps": [
        {"type": "thought", "signature": "SIG", "summary": [{"type": "text", "text": "Hmm."}]},
        {"type": "model_output", "content": [{"type": "text", "text": "Let me look."}]},
        {
            "type": "function_call",
            "id": "fc_1",
            "name": "weather",
            "arguments": {"location": "Oslo"},
        },
    ],
}


async def test_non_streamed_interaction_with_a_function_call(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.json(WHOLE))
    adapter = make_adapter("gemini_interactions", stream=False)
    got = await collect(adapter, tools=TOOLS)
    assert got == [
        ReasoningDelta("Hmm."),
        TextDelta("Let me look."),
        ToolCallEvent(ToolCall("fc_1", "weather", {"location": "Oslo"})),
        Usage(12, 7, 19),
        Finish("tool_calls"),
    ]
    assert provider_server.requests[0].json()["stream"] is False


async def test_non_streamed_text_answer(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    answer = {**WHOLE, "status": "completed", "steps": WHOLE["steps"][1:2]}
    provider_server.enqueue(Turn.json(answer))
    got = await collect(make_adapter("gemini_interactions", stream=False))
    assert got == [TextDelta("Let me look."), Usage(12, 7, 19), Finish("stop")]


async def test_earlier_revision_outputs_and_content_events(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    call = {"type": "function_call", "id": "fc_1", "name": "ls", "arguments": {"path": "."}}
    old = [
        {
            "event_type": "interaction.start",
            "interaction": {"id": "v1_old", "status": "in_progress"},
        },
        {"event_type": "content.start", "index": 0, "content": {"type": "text"}},
        {"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": "Hi."}},
        {"event_type": "content.stop", "index": 0},
        {"event_type": "content.start", "index": 1, "content": {"type": "function_call"}},
        {"event_type": "content.delta", "index": 1, "delta": call},
        {"event_type": "content.stop", "index": 1},
        {
            "event_type": "interaction.complete",
            "interaction": {"id": "v1_old", "status": "completed"},
        },
    ]
    provider_server.enqueue(Turn.sse(old))  # data lines only: the type is in the JSON
    provider_server.enqueue(
        Turn.json(
            {
                "id": "v1_old",
                "status": "completed",
                "outputs": [{"type": "text", "text": "Whole."}, call],
            }
        )
    )
    streamed = await collect(make_adapter("gemini_interactions"))
    whole = await collect(make_adapter("gemini_interactions", stream=False))
    for got, text in ((streamed, "Hi."), (whole, "Whole.")):
        assert assemble_message(got)["content"] == text
        assert [e.call for e in got if isinstance(e, ToolCallEvent)] == [
            ToolCall("fc_1", "ls", {"path": "."})
        ]
        assert got[-1] == Finish("tool_calls")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            events(
                created(), {"event_type": "error", "error": {"code": "x", "message": "Bad\nthing"}}
            ),
            "Gemini: Bad thing",
        ),
        (events(created(), completed("failed")), "Gemini: the interaction failed"),
        (Turn.json({**WHOLE, "status": "cancelled"}), "the interaction cancelled"),
    ],
)
async def test_errors_inside_a_200_answer_are_one_line(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, body: Turn, words: str
) -> None:
    provider_server.enqueue(body)
    with pytest.raises(ProviderError) as caught:
        await collect(make_adapter("gemini_interactions"))
    assert str(caught.value) == words or words in str(caught.value)
    assert "\n" not in str(caught.value)


async def test_a_stream_cut_inside_a_call_runs_nothing(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    cut = call_steps(0, "fc_1", "create_file", '{"filepath": "a.txt", "content": "ha')[:-1]
    provider_server.enqueue(events(created(), *cut))
    got: list[Event] = []
    with pytest.raises(StreamInterrupted, match="cut off and did not run"):
        await collect(make_adapter("gemini_interactions"), into=got)
    assert not any(isinstance(e, ToolCallEvent) for e in got)


# -- requests ----------------------------------------------------------------------------------


def interactions(**options: Any) -> GeminiInteractionsAdapter:
    from codecompanion.adapters import create_adapter
    from codecompanion.adapters.base import AdapterSettings

    settings = AdapterSettings(
        name="gemini_interactions", url="http://x/v1beta", api_key="k", **options
    )
    adapter = create_adapter(settings)
    assert isinstance(adapter, GeminiInteractionsAdapter)
    return adapter


def test_second_turn_request_in_steps() -> None:
    adapter = interactions(
        parameters={"temperature": 0.1, "thinking_level": "low", "safety_settings": []}
    )
    request = adapter.build_request(sample_conversation(), TOOLS, "gemini-x")
    assert request.path == "/interactions"
    sent = request.body
    assert sent["model"] == "gemini-x"
    assert sent["system_instruction"] == "You are helpful."
    assert sent["generation_config"] == {"temperature": 0.1, "thinking_level": "low"}
    assert sent["safety_settings"] == []
    assert "previous_interaction_id" not in sent
    assert sent["input"] == [
        {
            "type": "user_input",
            "content": [{"type": "text", "text": "Weather in London? And list files."}],
        },
        {"type": "model_output", "content": [{"type": "text", "text": "Let me check."}]},
        {
            "type": "function_call",
            "id": "call_A1",
            "name": "weather",
            "arguments": {"location": "London", "units": "celsius"},
        },
        {"type": "function_call", "id": "call_B2", "name": "ls", "arguments": {}},
        {
            "type": "function_result",
            "call_id": "call_A1",
            "name": "weather",
            "result": "15 degrees",
        },
        {
            "type": "function_result",
            "call_id": "call_B2",
            "name": "ls",
            "result": "ls: permission denied",
            "is_error": True,
        },
    ]
    weather, ls = sent["tools"]
    assert ls == {"type": "function", "name": "ls", "description": "List files."}
    assert weather["type"] == "function" and weather["name"] == "weather"
    assert "additionalProperties" not in json.dumps(weather["parameters"])
    assert weather["parameters"]["required"] == ["location", "units"]


def test_thoughts_go_back_before_the_answer_they_led_to() -> None:
    adapter = interactions(stream=False)
    parser = adapter.new_parser()
    parser.feed(
        json.dumps(
            {
                **WHOLE,
                "steps": [
                    WHOLE["steps"][0],
                    {"type": "function_call", "id": "call_A1", "name": "weather", "arguments": {}},
                ],
            }
        ).encode()
    )
    parser.close()
    adapter.after_response(parser)
    steps = adapter.build_request(sample_conversation(), TOOLS, "m").body["input"]
    assert [s["type"] for s in steps] == [
        "user_input",
        "thought",
        "model_output",
        "function_call",
        "function_call",
        "function_result",
        "function_result",
    ]
    assert steps[1]["signature"] == "SIG"


def _answered(history: list[Message], text: str) -> list[Message]:
    return [*history, Message(role="llm", content=text)]


async def test_stored_turns_continue_by_previous_interaction_id(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    def reply(text: str, interaction_id: str) -> Turn:
        step = {"type": "model_output", "content": [{"type": "text", "text": text}]}
        return Turn.json({"id": interaction_id, "status": "completed", "steps": [step]})

    provider_server.enqueue(reply("One.", "v1_1"), reply("Two.", "v1_2"), reply("Again.", "v1_3"))
    provider_server.enqueue(reply("Fresh.", "v1_4"))
    adapter = make_adapter("gemini_interactions", stream=False, parameters={"store": True})
    system = Message(role="system", content="Be brief.")
    first = [system, Message(role="user", content="Hi")]
    await collect(adapter, first)
    second = [*_answered(first, "One."), Message(role="user", content="And?")]
    await collect(adapter, second)
    edited = [system, Message(role="user", content="Hello instead")]
    await collect(adapter, edited)
    bodies = [r.json() for r in provider_server.requests]
    assert bodies[0]["store"] is True and "previous_interaction_id" not in bodies[0]
    assert bodies[1]["previous_interaction_id"] == "v1_1"
    assert bodies[1]["input"] == [
        {"type": "user_input", "content": [{"type": "text", "text": "And?"}]}
    ]
    assert bodies[1]["system_instruction"] == "Be brief."
    # An edited history is not a continuation: everything is sent again.
    assert "previous_interaction_id" not in bodies[2]
    assert [s["type"] for s in bodies[2]["input"]] == ["user_input"]
    # Regenerating (the same history again, no new answer in between) sends everything too.
    await collect(adapter, edited)
    assert "previous_interaction_id" not in provider_server.requests[3].json()


async def test_a_failed_stored_turn_is_not_continued(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    ok = Turn.json(
        {
            "id": "v1_1",
            "status": "completed",
            "steps": [{"type": "model_output", "content": [{"type": "text", "text": "One."}]}],
        }
    )
    provider_server.enqueue(ok, Turn.error(400, "previous interaction not found"), ok)
    adapter = make_adapter("gemini_interactions", stream=False, parameters={"store": True})
    first = [Message(role="user", content="Hi")]
    await collect(adapter, first)
    second = [*_answered(first, "One."), Message(role="user", content="And?")]
    with pytest.raises(ProviderError, match="previous interaction not found"):
        await collect(adapter, second)
    await collect(adapter, second)
    retried = provider_server.requests[2].json()
    assert "previous_interaction_id" not in retried
    assert len(retried["input"]) == 3


def test_without_store_every_turn_sends_everything() -> None:
    adapter = interactions(stream=False)
    parser = adapter.new_parser()
    parser.feed(json.dumps({**WHOLE, "status": "completed"}).encode())
    parser.close()
    adapter.after_response(parser)
    request = adapter.build_request(sample_conversation(), TOOLS, "m")
    assert "previous_interaction_id" not in request.body
    assert request.body["store"] is False
