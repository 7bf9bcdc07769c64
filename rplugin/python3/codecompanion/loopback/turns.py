"""Scripted responses for the loopback provider: the Turn value and builders of provider streams."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

BodyFormat = Literal["sse", "ndjson", "json"]


@dataclass
class Turn:
    """One scripted HTTP response."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body_chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    drop_after: int | None = None
    stall: float = 0.0
    hold: float = 0.0  # after the last chunk, keep the connection open this long, then drop it

    @classmethod
    def sse(
        cls,
        events: Sequence[dict[str, Any] | str],
        *,
        delay: float = 0.0,
        chunk_size: int | None = None,
    ) -> Turn:
        """An SSE stream: dicts become `data:` JSON events, strings are sent verbatim."""
        blocks = [_sse_block(event) for event in events]
        return _typed("sse", _rechunk(blocks, chunk_size), delay)

    @classmethod
    def ndjson(cls, objs: Iterable[Any], *, delay: float = 0.0) -> Turn:
        """A newline-delimited JSON stream, one object per chunk."""
        return _typed("ndjson", [json.dumps(obj).encode() + b"\n" for obj in objs], delay)

    @classmethod
    def body(
        cls, data: bytes, content_type: str, *, chunk_size: int | None = None, delay: float = 0.0
    ) -> Turn:
        """Raw bytes, optionally cut into `chunk_size` pieces."""
        return _typed(content_type, _rechunk([data], chunk_size), delay)

    @classmethod
    def file(cls, path: str | Path, *, chunk_size: int | None = None, delay: float = 0.0) -> Turn:
        """A recorded response body; its format (SSE, NDJSON or JSON) is detected from the bytes."""
        data = Path(path).read_bytes()
        kind = detect_format(data)
        pieces = [data] if kind == "json" else data.splitlines(keepends=True)
        return _typed(kind, _rechunk(pieces, chunk_size), delay)

    @classmethod
    def error(cls, status: int, message: str = "", headers: dict[str, str] | None = None) -> Turn:
        """A non-streamed error answer in the common `{"error": {...}}` shape."""
        payload = {"error": {"message": message or f"HTTP {status}", "code": status}}
        return _typed("json", [json.dumps(payload).encode()], status=status, headers=headers)

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Turn:
        """A single JSON body."""
        return _typed("json", [json.dumps(obj).encode()], status=status)


_CONTENT_TYPES = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "json": "application/json",
}


def _typed(
    kind: str,
    chunks: list[bytes],
    delay: float = 0.0,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Turn:
    content_type = _CONTENT_TYPES.get(kind, kind)
    return Turn(status, {"Content-Type": content_type, **(headers or {})}, chunks, delay)


def _sse_block(event: dict[str, Any] | str) -> bytes:
    if isinstance(event, dict):
        return b"data: " + json.dumps(event).encode() + b"\n\n"
    if event == "[DONE]":
        return b"data: [DONE]\n\n"
    return event.rstrip("\n").encode() + b"\n\n"


def _rechunk(pieces: list[bytes], chunk_size: int | None) -> list[bytes]:
    if not chunk_size:
        return [p for p in pieces if p]
    data = b"".join(pieces)
    return [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]


def detect_format(data: bytes) -> BodyFormat:
    """Tell a captured body's shape from its bytes: SSE, NDJSON or one JSON document."""
    text = data.decode("utf-8", errors="replace").strip()
    if not text.startswith(("{", "[")):
        return "sse"
    try:
        json.loads(text)
    except ValueError:
        return "ndjson"
    return "json"


def openai_text(
    text: str, chunks: int = 1, model: str = "gpt-test", usage: bool = True, delay: float = 0.0
) -> Turn:
    """A Chat Completions stream: `text` in `chunks` deltas (`delay` s apart), then the end."""
    count = max(1, min(chunks, len(text) or 1))
    size = -(-len(text) // count) if text else 0
    pieces = [text[i : i + size] for i in range(0, len(text), size)] if text else [""]
    events: list[dict[str, Any] | str] = [_chunk(model, {"role": "assistant", "content": ""})]
    events += [_chunk(model, {"content": piece}) for piece in pieces]
    events.append(_chunk(model, {}, finish="stop"))
    if usage:
        events.append(_usage_chunk(model, len(text.split())))
    events.append("[DONE]")
    return Turn.sse(events, delay=delay)


def openai_tool_calls(calls: Sequence[tuple[str, str, dict[str, Any]]], text: str = "") -> Turn:
    """A Chat Completions stream making `calls` (id, name, args) with fragmented argument deltas."""
    model = "gpt-test"
    events: list[dict[str, Any] | str] = [_chunk(model, {"role": "assistant", "content": None})]
    if text:
        events.append(_chunk(model, {"content": text}))
    for index, (call_id, name, args) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        events.append(_chunk(model, {"tool_calls": [head]}))
        encoded = json.dumps(args)
        step = max(1, len(encoded) // 3)
        for start in range(0, len(encoded), step):
            part = {"index": index, "function": {"arguments": encoded[start : start + step]}}
            events.append(_chunk(model, {"tool_calls": [part]}))
    events.append(_chunk(model, {}, finish="tool_calls"))
    events.append(_usage_chunk(model, 10 * len(calls)))
    events.append("[DONE]")
    return Turn.sse(events)


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage_chunk(model: str, completion: int) -> dict[str, Any]:
    usage = {"prompt_tokens": 10, "completion_tokens": completion, "total_tokens": 10 + completion}
    return {"id": "chatcmpl-loopback", "model": model, "choices": [], "usage": usage}
