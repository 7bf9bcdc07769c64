"""Bodies over a real loopback connection: the answer ends at the provider's end marker even when
the server keeps the connection open, text is whole characters, and bodies are capped."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from typing import Any

import pytest
from tests.support.adapters import AdapterFactory, collect

from codecompanion.adapters.base import Finish, ReasoningDelta, TextDelta, ToolCallEvent
from codecompanion.errors import ProviderError
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.streams.parser import LineSplitter


def sse(*events: dict[str, Any] | str) -> list[bytes]:
    out = []
    for event in events:
        line = event if isinstance(event, str) else "data: " + json.dumps(event)
        out.append((line + "\n\n").encode())
    return out


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


USAGE = {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
KEEPALIVE = [b": keep-alive\n\n"] * 3


def gemini(text: str, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": {"totalTokenCount": 3}}


def anthropic(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: " + json.dumps({"type": kind, **fields})


# Each provider's body: the answer "whole answer", its end, then a server that goes quiet while
# keeping the connection open (after keep-alive comments where the format has them).
BODIES: dict[str, list[bytes]] = {
    "openai": openai_text("whole answer", chunks=3).body_chunks + KEEPALIVE,
    "openai-finish-without-done": sse(chunk("whole "), chunk("answer"), chunk(None, "stop"), USAGE),
    "anthropic": sse(
        anthropic("message_start", message={"usage": {"input_tokens": 1}}),
        anthropic("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        anthropic("content_block_delta", index=0, delta={"type": "text_delta", "text": "whole "}),
        anthropic("content_block_delta", index=0, delta={"type": "text_delta", "text": "answer"}),
        anthropic("content_block_stop", index=0),
        anthropic("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2}),
        anthropic("message_stop"),
    )
    + KEEPALIVE,
    "openai_responses": sse(
        {"type": "response.output_text.delta", "delta": "whole "},
        {"type": "response.output_text.delta", "delta": "answer"},
        {"type": "response.completed", "response": {"status": "completed"}},
    )
    + KEEPALIVE,
    "gemini": sse(gemini("whole "), gemini("answer", "STOP")) + KEEPALIVE,
    "ollama": [
        json.dumps({"message": {"content": "whole "}, "done": False}).encode() + b"\n",
        json.dumps({"message": {"content": "answer"}, "done": True}).encode() + b"\n",
        b"\n",
        b"\n",
    ],
}
ADAPTER = {"openai-finish-without-done": "openai"}


@pytest.mark.parametrize("name", list(BODIES))
async def test_the_answer_ends_at_the_end_marker_though_the_connection_stays_open(
    name: str, make_adapter: AdapterFactory, provider_server: LoopbackServer
) -> None:
    kind = "application/x-ndjson" if name == "ollama" else "text/event-stream"
    turn = Turn(headers={"Content-Type": kind}, body_chunks=BODIES[name], hold=60)
    provider_server.enqueue(turn, openai_text("next"))
    adapter = make_adapter(ADAPTER.get(name, name), read_timeout=3.0)
    adapter.finish_grace = 0.2  # type: ignore[misc]
    events = await collect(adapter)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "whole answer"
    assert [e for e in events if isinstance(e, Finish)] == [Finish("stop")]


async def test_the_next_turn_reuses_the_connection_after_a_clean_end(
    make_adapter: AdapterFactory, provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("one"), openai_text("two"))
    adapter = make_adapter("openai")
    await collect(adapter)
    await collect(adapter)
    first, second = provider_server.requests
    assert second.reused and second.connection == first.connection


SMILE = "\U0001f600"


@pytest.mark.parametrize("size", [1, 7, 4096])
async def test_a_surrogate_pair_split_across_events_is_one_character(
    size: int, make_adapter: AdapterFactory, provider_server: LoopbackServer
) -> None:
    reasoning = {"choices": [{"index": 0, "delta": {"reasoning_content": "\ud83d"}}]}
    call = {
        "index": 0,
        "id": "c\ud83d",
        "type": "function",
        "function": {"name": "ls", "arguments": json.dumps({"path": "a\udc00b"})},
    }
    body = b"".join(
        sse(
            reasoning,
            {"choices": [{"index": 0, "delta": {"reasoning_content": "\ude00 hm"}}]},
            chunk("\ud83d"),
            chunk("\ude00 smile "),
            chunk("lone \ude00 and "),
            {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
            chunk("\ud83d"),
            chunk(None, "tool_calls"),
            "data: [DONE]",
        )
    )
    provider_server.enqueue(Turn.body(body, "text/event-stream", chunk_size=size))
    events = await collect(make_adapter("openai"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert text == f"{SMILE} smile lone \ufffd and \ufffd"
    assert thought == f"{SMILE} hm"
    (call_event,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call_event.call.id == "c\ufffd"
    assert call_event.call.arguments == {"path": "a\ufffdb"}
    for event in events:
        json.dumps(event.__dict__, default=str, ensure_ascii=False).encode("utf-8")


@pytest.mark.timeout(60)
def test_a_ten_megabyte_line_in_small_pieces_is_one_line() -> None:
    # Each piece used to re-join the whole unfinished line: 10 MB in 256-byte pieces took
    # minutes (quadratic); it is one pass now (bench: `python -m bench pure`).
    line = "data: " + "x" * 10_000_000
    data = (line + "\r\n").encode()
    splitter = LineSplitter()
    lines: list[str] = []
    for start in range(0, len(data), 256):
        lines += splitter.feed(data[start : start + 256])
    lines += splitter.close()
    assert lines == [line]


@pytest.mark.parametrize(
    "pieces",
    [["a\r", "\nb"], ["a\r", "b\r\n"], ["a", "b", "\r"], ["\r", "\r\n", "c"], ["é"[0], "\n"]],
)
def test_line_ends_split_across_pieces(pieces: list[str]) -> None:
    splitter = LineSplitter()
    out: list[str] = []
    for piece in pieces:
        out += splitter.feed(piece.encode())
    out += splitter.close()
    text = "".join(pieces).replace("\r\n", "\n").replace("\r", "\n")
    expected = text.split("\n")
    if expected and expected[-1] == "":
        expected.pop()
    assert out == expected


def gzip_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"data: " + b"0" * (1 << 20)
    parts = [packer.compress(block) for _ in range(size >> 20)]
    return b"".join(parts) + packer.flush()


async def test_a_gzip_bomb_is_refused_within_the_limit(
    make_adapter: AdapterFactory, provider_server: LoopbackServer
) -> None:
    bomb = gzip_bomb(400 << 20)
    assert len(bomb) < 1_000_000
    turn = Turn.body(bomb, "text/event-stream", chunk_size=65536)
    turn.headers["Content-Encoding"] = "gzip"
    provider_server.enqueue(turn)
    adapter = make_adapter("openai")
    adapter.max_body_bytes = 8_000_000  # type: ignore[misc]
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError, match="larger than 8 MB"):
            await collect(adapter)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000
    assert provider_server.requests[0].headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "gzip-two-members"])
async def test_compressed_answers_are_read(
    encoding: str, make_adapter: AdapterFactory, provider_server: LoopbackServer
) -> None:
    body = b"".join(openai_text("packed answer", chunks=2).body_chunks)
    if encoding == "gzip":
        packed = gzip.compress(body)
    elif encoding == "gzip-two-members":
        packed = gzip.compress(body[:40]) + gzip.compress(body[40:])
    elif encoding == "deflate":
        packed = zlib.compress(body)
    else:
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        packed = packer.compress(body) + packer.flush()
    turn = Turn.body(packed, "text/event-stream", chunk_size=17)
    turn.headers["Content-Encoding"] = "gzip" if encoding.startswith("gzip") else "deflate"
    provider_server.enqueue(turn)
    events = await collect(make_adapter("openai"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "packed answer"
