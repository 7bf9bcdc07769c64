"""A body that ends without a transport error is still checked: a tool call cut off (by a proxy
or at the output limit) never runs, and a body that is no answer at all is one clear error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta, ToolCallEvent
from codecompanion.adapters.http_adapter import HTTPAdapter
from codecompanion.errors import ProviderError, StreamInterrupted
from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.messages import Message


async def collect(adapter: HTTPAdapter, into: list[Event]) -> None:
    try:
        async for event in adapter.stream([Message(role="user", content="hi")], []):
            into.append(event)
    finally:
        await adapter.aclose()


def adapter(server: LoopbackServer, name: str) -> HTTPAdapter:
    url = server.url + ("/v1" if name == "openai" else "")
    return create_adapter(AdapterSettings(name=name, url=url, api_key="k", model="m"))


def anthropic(*events: dict[str, Any]) -> Turn:
    return Turn.sse([f"event: {e['type']}\ndata: {json.dumps(e)}" for e in events])


TOOL_START = {
    "type": "content_block_start",
    "index": 1,
    "content_block": {"type": "tool_use", "id": "toolu_1", "name": "create_file", "input": {}},
}
HALF_ARGS = {
    "type": "content_block_delta",
    "index": 1,
    "delta": {"type": "input_json_delta", "partial_json": '{"filepath": "a.txt", "content": "ha'},
}
TEXT = [
    {"type": "message_start", "message": {"usage": {"input_tokens": 5}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Ok. "}},
    {"type": "content_block_stop", "index": 0},
]


def openai_call(arguments: str, finish: str | None) -> Turn:
    head = {"index": 0, "id": "c1", "type": "function"}
    head["function"] = {"name": "create_file", "arguments": arguments}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": finish}]}
    return Turn.sse([chunk, "[DONE]"] if finish else [chunk])


CUT = {
    "anthropic-stream-ends-in-a-tool-block": (
        "anthropic",
        anthropic(*TEXT, TOOL_START, HALF_ARGS),
        "ended in the middle of a tool call",
    ),
    "anthropic-max-tokens-in-a-tool-block": (
        "anthropic",
        anthropic(
            *TEXT,
            TOOL_START,
            HALF_ARGS,
            {"type": "content_block_stop", "index": 1},
            {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
            {"type": "message_stop"},
        ),
        "reached its output limit",
    ),
    "openai-length-in-a-tool-call": (
        "openai",
        openai_call('{"filepath": "a.txt", "content": "ha', "length"),
        "reached its output limit",
    ),
    "openai-stream-ends-in-a-tool-call": (
        "openai",
        openai_call('{"filepath": "a.txt"}', None),
        "ended in the middle of a tool call",
    ),
}


@pytest.mark.parametrize("case", list(CUT))
async def test_a_cut_off_tool_call_is_an_interruption(
    provider_server: LoopbackServer, case: str
) -> None:
    name, turn, words = CUT[case]
    provider_server.enqueue(turn)
    events: list[Event] = []
    with pytest.raises(StreamInterrupted, match=words) as caught:
        await collect(adapter(provider_server, name), events)
    assert "cut off and did not run" in str(caught.value)
    if "ended in the middle" in words:
        assert not any(isinstance(e, ToolCallEvent) for e in events)
    if name == "anthropic":
        assert TextDelta("Ok. ") in events


async def test_complete_calls_at_the_output_limit_still_run(
    provider_server: LoopbackServer,
) -> None:
    provider_server.enqueue(openai_call('{"filepath": "a.txt", "content": "whole"}', "length"))
    events: list[Event] = []
    await collect(adapter(provider_server, "openai"), events)
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert calls and calls[0].arguments == {"filepath": "a.txt", "content": "whole"}


async def test_text_without_an_end_marker_is_accepted(provider_server: LoopbackServer) -> None:
    delta = {"choices": [{"index": 0, "delta": {"content": "plain"}, "finish_reason": None}]}
    provider_server.enqueue(Turn.sse([delta]))
    events: list[Event] = []
    await collect(adapter(provider_server, "openai"), events)
    assert TextDelta("plain") in events


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"", "sent an empty response"),
        (b"<html><body>Bad Gateway</body></html>", "could not be read: <html><body>Bad"),
        (b'{"detail": "not a chat answer"}', "could not be read"),
        (b"[" * 100_000 + b"]" * 100_000, "could not be read"),
    ],
)
async def test_a_body_that_is_no_answer_is_one_line(
    provider_server: LoopbackServer, body: bytes, words: str
) -> None:
    provider_server.enqueue(Turn.body(body, "text/html"))
    with pytest.raises(ProviderError) as caught:
        await collect(adapter(provider_server, "openai"), [])
    message = str(caught.value)
    assert words in message and "\n" not in message and len(message) < 200


async def test_an_answer_that_says_nothing_is_not_an_error(
    provider_server: LoopbackServer,
) -> None:
    stop = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    provider_server.enqueue(Turn.sse([stop, "[DONE]"]))
    events: list[Event] = []
    await collect(adapter(provider_server, "openai"), events)  # raises nothing
    assert events == [Finish("stop")]
