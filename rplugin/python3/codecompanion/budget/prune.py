"""Pruning: old tool results sent as a short stub, so a long chat keeps its window.

A pruned result keeps its place and its call id (every call still has its one result in what
is sent); only its text is replaced by a stub naming the tool, its arguments and its size. The
full text stays in the history, the saved chat and `gO`: the mark is `extra["pruned"]`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from ..messages import Message, ToolCall

PRUNED = "pruned"
ARGUMENTS_SHOWN = 120  # characters of a call's arguments a stub repeats


def rounds(messages: Sequence[Message]) -> list[list[int]]:
    """The indexes of each tool round's results (oldest first): one list per calls message."""
    out: list[list[int]] = []
    by_call: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "llm" and message.tool_calls:
            out.append([])
            for call in message.tool_calls:
                by_call[call.id] = len(out) - 1
        elif message.role == "tool" and message.tool_call_id in by_call:
            out[by_call[message.tool_call_id]].append(index)
    return out


def stub(message: Message, call: ToolCall | None) -> str:
    """The short text sent instead of a pruned result."""
    text = message.content or ""
    name = message.tool_name or (call.name if call else "tool")
    arguments = json.dumps(call.arguments, ensure_ascii=False) if call else "{}"
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[: ARGUMENTS_SHOWN - 1] + "…"
    lines = text.count("\n") + 1 if text else 0
    outcome = "failed" if message.is_error else "returned"
    return (
        f"[Output pruned to save context: {name}({arguments}) {outcome} {lines} lines, "
        f"{len(text.encode())} bytes. Call the tool again if you need it.]"
    )


def prune_oldest(messages: Sequence[Message], keep_rounds: int, fits: Callable[[], bool]) -> int:
    """Mark results pruned, oldest round first, until `fits()` or only the last `keep_rounds`
    rounds are left whole; returns how many results were pruned."""
    pruned = 0
    every = rounds(messages)
    for indexes in every[: max(0, len(every) - keep_rounds)]:
        if fits():
            break
        for index in indexes:
            message = messages[index]
            if not message.extra.get(PRUNED) and message.content:
                message.extra[PRUNED] = True
                pruned += 1
    return pruned


def as_sent(messages: Sequence[Message]) -> list[Message]:
    """The messages with each pruned result replaced by its stub (copies; the store is kept)."""
    calls = {c.id: c for m in messages if m.role == "llm" for c in m.tool_calls}
    out: list[Message] = []
    for message in messages:
        if message.role == "tool" and message.extra.get(PRUNED):
            text = stub(message, calls.get(message.tool_call_id or ""))
            message = dataclasses.replace(message, content=text)
        out.append(message)
    return out
