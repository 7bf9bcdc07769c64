"""Shapes each provider documents beyond the captures: reasoning, no-argument calls, errors."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import (
    AdapterSettings,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from codecompanion.adapters.openai import OpenAIParser
from codecompanion.errors import ProviderError
from codecompanion.messages import ToolCall
from codecompanion.streams.parser import assemble_message


def sse(*events: dict[str, Any] | str) -> bytes:
    out = []
    for event in events:
        out.append(event if isinstance(event, str) else "data: " + json.dumps(event))
    return ("\n\n".join(out) + "\n\n").encode()


def run(adapter: str, body: bytes) -> tuple[list[Event], Exception | None]:
    parser = create_adapter(AdapterSettings(name=adapter, url="http://x", api_key="k")).new_parser()
    events = parser.feed(body) + parser.close()
    return events, parser.error


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


# -- OpenAI family ---------------------------------------------------------------------------


def test_openai_text_reasoning_usage_and_finish() -> None:
    body = sse(
        delta(role="assistant", content=""),
        delta(reasoning_content="Think"),
        delta(content="Hel"),
        delta(content="lo"),
        finish("stop"),
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
        "data: [DONE]",
    )
    events, error = run("deepseek", body)
    assert error is None
    assert events == [
        ReasoningDelta("Think"),
        TextDelta("Hello"),  # the deltas of one read come as one
        Usage(3, 2, 5),
        Finish("stop"),
    ]


def test_deltas_of_one_read_come_as_one_per_run_in_order() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}
    parser = create_adapter(AdapterSettings(name="openai", api_key="k")).new_parser()
    body = sse(
        *[delta(content=word) for word in ("a", "b", "c")],
        delta(reasoning_content="r1"),
        delta(reasoning_content="r2"),
        delta(content="\ud83d"),  # a surrogate pair split across two deltas of the run
        delta(content="\ude00!"),
        delta(tool_calls=[call]),  # a call's event comes when it is whole, at the finish
        delta(content=" after"),
        finish("tool_calls"),
    )
    head, tail = body[:-40], body[-40:]
    assert parser.feed(head) + parser.feed(tail) + parser.close() == [
        TextDelta("abc"),
        ReasoningDelta("r1r2"),
        TextDelta("\U0001f600! after"),
        ToolCallEvent(ToolCall("c1", "ls", {})),
        Finish("tool_calls"),
    ]
    parser = create_adapter(AdapterSettings(name="openai", api_key="k")).new_parser()
    assert parser.feed(sse(delta(content="x"), delta(content="\ud83d"))) == [TextDelta("x")]
    assert parser.feed(sse(delta(content="\ude00"))) == [TextDelta("\U0001f600")]


def test_openai_reasoning_sent_under_two_names_is_not_doubled() -> None:
    events, _ = run("openrouter", sse(delta(reasoning="a", reasoning_content="a"), "data: [DONE]"))
    assert assemble_message(events)["reasoning"] == "a"


def test_openai_no_argument_and_malformed_calls() -> None:
    body = sse(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "ls", "arguments": ""}}]),
        delta(tool_calls=[{"index": 1, "id": "c2", "function": {"name": "rm", "arguments": "{"}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": '"path": '}}]),
        finish("tool_calls"),
    )
    events, _ = run("openai", body)
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [ToolCall("c1", "ls", {}), ToolCall("c2", "rm", {}, '{"path": ')]
    assert events[-1] == Finish("tool_calls")


def test_openai_calls_without_index_or_reusing_index_stay_apart() -> None:
    body = sse(
        delta(tool_calls=[{"id": "a", "function": {"name": "one", "arguments": '{"x":'}}]),
        delta(tool_calls=[{"function": {"arguments": "1}"}}]),
        delta(tool_calls=[{"index": 0, "id": "b", "function": {"name": "two", "arguments": "{}"}}]),
        delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "three", "arguments": ""}}]),
    )
    events, _ = run("openai_compatible", body)
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("a", "one", {"x": 1}),
        ("b", "two", {}),
        ("c", "three", {}),
    ]


def test_openrouter_processing_comments_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    body = b": OPENROUTER PROCESSING\n\n" + sse(delta(content="ok"), "data: [DONE]")
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        events, error = run("openrouter", body)
    assert (events, error) == ([TextDelta("ok"), Finish("stop")], None)
    assert caplog.text == ""


def test_openai_error_object_inside_a_200_stream() -> None:
    body = sse(delta(content="partial"), {"error": {"message": "The server had an error"}})
    events, error = run("openai", body)
    assert events == [TextDelta("partial")]
    assert isinstance(error, ProviderError)
    assert str(error) == "OpenAI: The server had an error"


def test_malformed_and_unknown_lines_are_skipped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = b"data: {not json\n\nweird: line\n\ndata: 42\n\n" + sse(delta(content="fine"))
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        events, error = run("xai", body)
    assert (events, error) == ([TextDelta("fine"), Finish("stop")], None)
    assert "malformed stream data" in caplog.text
    assert "unknown stream line" in caplog.text
    assert "unexpected stream value" in caplog.text


def test_unexpected_object_shape_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    body = sse({"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}, delta(content="ok"))
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        events, error = run("openai", body)
    assert (events, error) == ([TextDelta("ok"), Finish("stop")], None)
    assert "unexpected stream object" in caplog.text


def test_openai_non_streamed_body_with_reasoning() -> None:
    body = json.dumps(
        {
            "object": "chat.completion",
            "choices": [
                {
                    "message": {"content": "Hi", "reasoning_content": "hmm"},
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
        indent=2,
    ).encode()
    events, _ = run("deepseek", body)
    assert events == [ReasoningDelta("hmm"), TextDelta("Hi"), Usage(1, 1, 2), Finish("length")]


# -- Anthropic ---------------------------------------------------------------------------------


def anthropic_event(kind: str, **data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}"


def test_anthropic_thinking_and_a_call_without_arguments() -> None:
    body = sse(
        anthropic_event("message_start", message={"usage": {"input_tokens": 10}}),
        anthropic_event(
            "content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}
        ),
        anthropic_event(
            "content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hmm"}
        ),
        anthropic_event(
            "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "S"}
        ),
        anthropic_event("content_block_stop", index=0),
        anthropic_event(
            "content_block_start",
            index=1,
            content_block={"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
        ),
        anthropic_event("content_block_stop", index=1),
        anthropic_event(
            "message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 4}
        ),
        anthropic_event("message_stop"),
    )
    events, error = run("anthropic", body)
    assert error is None
    assert events == [
        ReasoningDelta("Hmm"),
        ToolCallEvent(ToolCall("toolu_1", "ls", {})),
        Usage(10, 4, 14),
        Finish("tool_calls"),
    ]


def test_anthropic_error_event() -> None:
    body = sse(
        anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Hi"}),
        anthropic_event("error", error={"type": "overloaded_error", "message": "Overloaded"}),
    )
    events, error = run("anthropic", body)
    assert events == [TextDelta("Hi")]
    assert str(error) == "Anthropic: Overloaded"


def test_anthropic_unclosed_tool_block_is_still_delivered() -> None:
    body = sse(
        anthropic_event(
            "content_block_start",
            index=0,
            content_block={"type": "tool_use", "id": "t", "name": "ls", "input": {}},
        ),
        anthropic_event(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '{"a": 1}'},
        ),
    )
    events, _ = run("anthropic", body)
    assert events == [ToolCallEvent(ToolCall("t", "ls", {"a": 1})), Finish("tool_calls")]


# -- Gemini ----------------------------------------------------------------------------------


def gemini_chunk(*parts: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish_reason:
        candidate["finishReason"] = finish_reason
    return {"candidates": [candidate]}


def test_gemini_thoughts_and_id_less_calls_in_separate_chunks_get_distinct_ids() -> None:
    body = sse(
        gemini_chunk({"text": "plan", "thought": True}),
        gemini_chunk({"functionCall": {"name": "ls", "args": {}}}),
        gemini_chunk({"functionCall": {"name": "ls", "args": {"path": "b"}}}, finish_reason="STOP"),
    )
    events, _ = run("gemini", body)
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert events[0] == ReasoningDelta("plan")
    assert [c.id for c in calls] == ["call_1", "call_2"]
    assert calls[1].arguments == {"path": "b"}
    assert events[-1] == Finish("tool_calls")


def test_gemini_error_and_blocked_prompt() -> None:
    _, error = run("gemini", sse({"error": {"code": 400, "message": "API key not valid"}}))
    _, blocked = run("gemini", sse({"promptFeedback": {"blockReason": "SAFETY"}}))
    assert str(error) == "Gemini: API key not valid"
    assert "blocked the prompt (SAFETY)" in str(blocked)


def test_gemini_max_tokens_finish() -> None:
    events, _ = run("gemini", sse(gemini_chunk({"text": "cut"}, finish_reason="MAX_TOKENS")))
    assert events == [TextDelta("cut"), Finish("length")]


# -- Ollama ----------------------------------------------------------------------------------


def test_ollama_thinking_text_and_done() -> None:
    lines = [
        {"message": {"role": "assistant", "content": "", "thinking": "hmm"}, "done": False},
        {"message": {"role": "assistant", "content": "Hi"}, "done": False},
        {
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 5,
            "eval_count": 2,
        },
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    events, _ = run("ollama", body)
    assert events == [ReasoningDelta("hmm"), TextDelta("Hi"), Usage(5, 2, 7), Finish("stop")]


def test_ollama_error_line() -> None:
    events, error = run("ollama", b'{"error": "model requires more system memory"}\n')
    assert events == []
    assert str(error) == "Ollama: model requires more system memory"


# -- OpenAI Responses ------------------------------------------------------------------------


def responses_event(kind: str, **data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}"


def test_responses_stream_with_reasoning_text_and_a_call() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_9",
        "name": "ls",
        "arguments": "",
    }
    body = sse(
        responses_event("response.created", response={"status": "in_progress"}),
        responses_event("response.reasoning_summary_text.delta", delta="Plan"),
        responses_event("response.output_text.delta", delta="Listing."),
        responses_event("response.output_item.added", output_index=1, item=item),
        responses_event("response.function_call_arguments.delta", item_id="fc_1", delta='{"p'),
        responses_event("response.function_call_arguments.delta", item_id="fc_1", delta='": 1}'),
        responses_event("response.output_item.done", item={**item, "arguments": '{"p": 1}'}),
        responses_event(
            "response.completed",
            response={
                "status": "completed",
                "usage": {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10},
            },
        ),
    )
    events, error = run("openai_responses", body)
    assert error is None
    assert events == [
        ReasoningDelta("Plan"),
        TextDelta("Listing."),
        ToolCallEvent(ToolCall("call_9", "ls", {"p": 1})),
        Usage(7, 3, 10),
        Finish("tool_calls"),
    ]


def test_responses_failure_and_error_events() -> None:
    failed = responses_event(
        "response.failed", response={"status": "failed", "error": {"message": "boom"}}
    )
    _, error = run("openai_responses", sse(failed))
    _, other = run("openai_responses", sse(responses_event("error", message="bad request")))
    assert str(error) == "OpenAI: boom"
    assert str(other) == "OpenAI: bad request"


def test_responses_non_streamed_object() -> None:
    body = json.dumps(
        {
            "object": "response",
            "status": "completed",
            "output": [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "R"}]},
                {"type": "message", "content": [{"type": "output_text", "text": "T"}]},
                {"type": "function_call", "call_id": "c", "name": "ls", "arguments": ""},
            ],
        }
    ).encode()
    events, _ = run("openai_responses", body)
    assert assemble_message(events) == {
        "content": "T",
        "reasoning": "R",
        "tool_calls": [{"id": "c", "name": "ls", "arguments": {}}],
    }


_VALUES = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.integers(),
    st.just([{"index": 0, "id": "c", "function": {"name": "ls", "arguments": "{}"}}]),
    st.just({"content": "whole"}),
)
# What a chunk of text alone may be turned into: a key beside the content, another value for
# it, a finish, a second choice, usage, an error, a whole message.
_CHANGES = st.dictionaries(
    st.sampled_from(
        ["content", "reasoning_content", "reasoning", "role", "tool_calls", "refusal"]
        + ["finish_reason", "message", "second", "usage", "error", "choices", "delta"]
    ),
    _VALUES,
    max_size=2,
)


def _chunk(text: str, changes: dict[str, Any]) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": text}
    choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
    chunk: dict[str, Any] = {"id": "chatcmpl-1", "choices": [choice]}
    for key, value in changes.items():
        if key in ("finish_reason", "message"):
            choice[key] = value
        elif key == "second" and isinstance(chunk["choices"], list):  # not if replaced first
            chunk["choices"].append({"index": 1, "delta": {"content": value}})
        elif key == "second":
            continue
        elif key in ("usage", "error"):
            chunk[key] = {"prompt_tokens": 1} if key == "usage" and value else value
        elif key in ("choices", "delta"):
            (chunk if key == "choices" else choice)[key] = value
        else:
            delta[key] = value
    return chunk


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=3), changes=_CHANGES)
@example(text="", changes={"choices": None, "second": None})  # choices replaced before a second
def test_a_chunk_of_text_alone_reads_as_the_general_reading_does(
    text: str, changes: dict[str, Any]
) -> None:
    chunk = _chunk(text, changes)

    def read(quick: bool) -> object:
        parser = create_adapter(AdapterSettings(name="openai", api_key="k")).new_parser()
        assert isinstance(parser, OpenAIParser)
        try:
            events = parser.on_object(None, chunk) if quick else parser._read(chunk)
        except Exception as exc:  # the parser's caller skips what raises: the same must raise
            events = [type(exc).__name__]
        return events, parser.finish_reason, parser.usage, parser.flush_calls()

    assert read(quick=True) == read(quick=False)
