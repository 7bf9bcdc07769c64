"""Scripted model answers for the loopback server, in the shape OpenAI really streams."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from codecompanion.loopback.server import Turn

MODEL = "gpt-bench"
_WORDS = (
    "the buffer stays fluid while tokens arrive quickly and every chunk lands in order "
    "so a user can keep typing reading scrolling or switching windows without waiting"
).split()


def _event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One chunk as OpenAI sends it (fields copied from a recorded stream's shape)."""
    return {
        "id": "chatcmpl-BKTpxLzenMWda0yXQGBqvT7hIh2jN",
        "object": "chat.completion.chunk",
        "created": 1744220953,
        "model": MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_726d488742",
        "usage": None,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _usage(completion: int) -> dict[str, Any]:
    usage = {"prompt_tokens": 50, "completion_tokens": completion, "total_tokens": 50 + completion}
    return {**_event({}), "choices": [], "usage": usage}


def answer_pieces(chunks: int, sentinel: str) -> list[str]:
    """`chunks` text deltas of two words (~12 characters); the last ends with `sentinel`.

    Lines of six deltas make paragraphs of four lines, as Markdown answers have.
    """
    words = itertools.cycle(_WORDS)
    pieces = []
    for index in range(chunks - 1):
        first, second = next(words), next(words)
        end = " "
        if index % 24 == 23:
            end = "\n\n"  # a paragraph of four lines
        elif index % 6 == 5:
            end = "\n"
        pieces.append(f"{first} {second}{end}")
    pieces.append(f"end {sentinel}")
    return pieces


def text_events(pieces: Sequence[str]) -> list[dict[str, Any] | str]:
    """A whole Chat Completions stream for these text deltas."""
    events: list[dict[str, Any] | str] = [_event({"role": "assistant", "content": ""})]
    events += [_event({"content": piece}) for piece in pieces]
    events += [_event({}, "stop"), _usage(2 * len(pieces)), "[DONE]"]
    return events


def sse_bytes(events: Sequence[dict[str, Any] | str]) -> list[bytes]:
    """The events as SSE blocks, one per element (how a server flushes them)."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
        out.append(b"data: " + data.encode() + b"\n\n")
    return out


def sse_turn(events: Sequence[dict[str, Any] | str]) -> Turn:
    """A 200 SSE answer flushing one event per chunk, without delay."""
    return Turn(200, {"Content-Type": "text/event-stream"}, sse_bytes(events))


def text_turn(chunks: int, sentinel: str) -> Turn:
    """An answer of `chunks` SSE text chunks ending with `sentinel`."""
    return sse_turn(text_events(answer_pieces(chunks, sentinel)))


class StampedChunks(list[bytes]):
    """A turn's body chunks that note when the server finished writing the last one."""

    sent_at: float | None = None

    def __iter__(self) -> Iterator[bytes]:
        yield from super().__iter__()
        self.sent_at = time.monotonic()


def tool_call_turn(calls: Sequence[tuple[str, str, dict[str, Any]]]) -> tuple[Turn, StampedChunks]:
    """A streamed answer making `calls` (id, name, args), argument JSON in fragments.

    Returns the turn and its chunks, whose `sent_at` is the server's time (time.monotonic)
    right after the last chunk was written.
    """
    events: list[dict[str, Any] | str] = [_event({"role": "assistant", "content": None})]
    for index, (call_id, name, args) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        events.append(
            _event({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        )
        encoded = json.dumps(args)
        for start in range(0, len(encoded), 6):
            part = {"index": index, "function": {"arguments": encoded[start : start + 6]}}
            events.append(_event({"tool_calls": [part]}))
    events += [_event({}, "tool_calls"), _usage(20 * len(calls)), "[DONE]"]
    stamped = StampedChunks(sse_bytes(events))
    return Turn(200, {"Content-Type": "text/event-stream"}, stamped), stamped
