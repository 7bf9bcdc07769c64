"""Compaction: the earlier conversation summarised into one message, the recent turns kept.

The history keeps every message: the summarised ones are marked `extra["compacted"] = n` (the
n-th compaction) and are no longer sent; the summary is a hidden system message placed where
the cut is, tagged `compaction:n`. A cut falls only before a turn (a user message) whose earlier
calls all have their results, so what is sent keeps every call with its one result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..adapters.base import ChatAdapter, TextDelta
from ..errors import ProviderError
from ..messages import Message, MessageStore
from .count import estimate_text

COMPACTED = "compacted"
SUMMARY_TAG = "compaction"
SUMMARY_PROMPT = (
    "You write the working memory of a coding assistant. Summarise the conversation below so "
    "the assistant can continue it without the original: the user's goals and requests, "
    "decisions made, files read or changed and what was learned from them, commands run and "
    "their outcomes, open questions and the next step. Keep names, paths, numbers and code "
    "identifiers exact. Write plain Markdown, at most about 300 words, nothing else."
)
SUMMARY_HEADER = "Summary of the earlier conversation (it was compacted to save context):\n\n"
RESULT_SHOWN = 600  # characters of each tool result the summariser reads


@dataclass(frozen=True)
class Cut:
    """Messages `start..end` (indexes, end excluded) are to be summarised."""

    start: int
    end: int
    count: int  # how many messages in that span are summarised (not system prompts)


def is_summary(message: Message) -> bool:
    """True for the message a compaction left in place of what it summarised."""
    return message.role == "system" and (message.tag or "").startswith(SUMMARY_TAG + ":")


def hidden(messages: Sequence[Message]) -> list[bool]:
    """Per message, whether a compaction whose summary is still in the history summarised it.

    A rewind or regenerate that cuts a summary away brings back what it summarised.
    """
    present = {_number(m) for m in messages if is_summary(m)}
    return [m.extra.get(COMPACTED) in present for m in messages]


def _number(summary: Message) -> int:
    try:
        return int((summary.tag or "").rpartition(":")[2])
    except ValueError:
        return 0


def find_cut(messages: Sequence[Message], keep_turns: int) -> Cut | None:
    """Where to cut so the last `keep_turns` turns stay whole; 0 (between turns only, for
    `/compact`) summarises every turn."""
    gone = hidden(messages)
    starts = [i for i, m in enumerate(messages) if m.role == "user" and not gone[i]]
    keep = max(0, keep_turns)
    ends = starts[: max(0, len(starts) - keep + 1)] if keep else [*starts, len(messages)]
    for end in reversed(ends):
        if not _answered_before(messages, end):
            continue
        span = [
            m
            for i, m in enumerate(messages[:end])
            if not gone[i] and (m.role != "system" or is_summary(m))
        ]
        if any(not is_summary(m) for m in span):
            return Cut(0, end, len(span))
        return None
    return None


def _answered_before(messages: Sequence[Message], end: int) -> bool:
    called = {c.id for m in messages[:end] if m.role == "llm" for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages[:end] if m.role == "tool"}
    return called <= answered


def transcript(messages: Sequence[Message], budget: int) -> str:
    """The span as text for the summariser, about `budget` tokens: an earlier summary always,
    then the latest messages that fit (the oldest are left out first)."""
    summaries: list[str] = []
    parts: list[str] = []
    for message, gone in zip(messages, hidden(messages), strict=True):
        if gone:
            continue
        if is_summary(message):
            summaries.append(_line(message))
        elif message.role != "system":
            parts.append(_line(message))
    used = sum(estimate_text(part) for part in summaries)
    kept: list[str] = []
    for part in reversed(parts):
        cost = estimate_text(part)
        if used + cost > budget and kept:
            kept.append("[…earlier messages left out…]")
            break
        kept.append(part if used + cost <= budget else part[-max(0, budget - used) * 3 :])
        used += cost
    return "\n\n".join([*summaries, *reversed(kept)])


def _line(message: Message) -> str:
    if is_summary(message):
        return f"Earlier summary:\n{message.content or ''}"
    if message.role == "tool":
        text = message.content or ""
        if len(text) > RESULT_SHOWN:
            text = text[:RESULT_SHOWN] + f"… [{len(text)} characters in all]"
        return f"Tool result ({message.tool_name or 'tool'}):\n{text}"
    if message.role == "llm" and message.tool_calls:
        calls = ", ".join(
            f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)[:200]})"
            for c in message.tool_calls
        )
        return f"Assistant called: {calls}"
    who = "User" if message.role == "user" else "Assistant"
    return f"{who}:\n{message.content or ''}"


async def summarise(adapter: ChatAdapter, text: str) -> str:
    """The summary `adapter` writes of `text` (no tools offered); raises AdapterError."""
    request = [
        Message(role="system", content=SUMMARY_PROMPT),
        Message(role="user", content=f"{text}\n\nWrite the summary now."),
    ]
    pieces: list[str] = []
    async for event in adapter.stream(request, []):
        if isinstance(event, TextDelta):
            pieces.append(event.text)
    summary = "".join(pieces).strip()
    if not summary:
        raise ProviderError("the summary came back empty")
    return summary


def apply(store: MessageStore, cut: Cut, summary: str) -> Message:
    """Mark the span compacted and put the summary where the cut is; the summary message."""
    messages = list(store)
    number = 1 + max((_number(m) for m in messages if is_summary(m)), default=0)
    gone = hidden(messages)
    for index in range(cut.start, cut.end):
        message = messages[index]
        if not gone[index] and (message.role != "system" or is_summary(message)):
            message.extra[COMPACTED] = number
    placed = store.insert_system(SUMMARY_HEADER + summary, f"{SUMMARY_TAG}:{number}", cut.end)
    placed.extra = {"compaction": number, "summarised": cut.count}
    return placed


def undo(store: MessageStore, placed: Message) -> None:
    """Take back an `apply`: the span is sent again and its summary is gone."""
    number = placed.extra.get("compaction")
    for message in store:
        if message.extra.get(COMPACTED) == number:
            del message.extra[COMPACTED]
    if placed.tag:
        store.remove_where(placed.tag)


def as_sent(messages: Sequence[Message]) -> list[Message]:
    """What is sent: every message no compaction summarised (the latest summary among them)."""
    return [m for m, gone in zip(messages, hidden(messages), strict=True) if not gone]
