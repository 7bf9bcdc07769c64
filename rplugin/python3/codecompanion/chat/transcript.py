"""How a chat looks in its buffer: render operations for headers, answers and tool calls."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..context.sources import replay_ops
from ..messages import Message, ToolCall
from ..render_ops import (
    Append,
    Block,
    Event,
    Header,
    Ready,
    RenderOp,
    Replace,
    Role,
    Tool,
    ToolOutput,
)

USER_HEADER = "## Me"
SUMMARY_LIMIT = 60


def llm_header(adapter: str, model: str | None) -> str:
    """`## LLM (adapter · model)`."""
    return f"## LLM ({adapter} · {model})" if model else f"## LLM ({adapter})"


def summarize_arguments(arguments: dict[str, Any]) -> str:
    """A short one-line summary of a call's arguments for the tool line."""
    if not arguments:
        return ""
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={text}")
    summary = " ".join(" ".join(parts).split())
    if len(summary) > SUMMARY_LIMIT:
        summary = summary[: SUMMARY_LIMIT - 1] + "…"
    return summary


def tool_title(call: ToolCall) -> str:
    """The one line a tool call shows: name and a short argument summary."""
    summary = summarize_arguments(call.arguments)
    return f"**{call.name}** {summary}".rstrip() if summary else f"**{call.name}**"


def header(role: Role, text: str) -> Header:
    """A role header separated from what came before."""
    return Header(role=role, text=text)


def append(text: str) -> Append:
    """Text appended where the buffer ends."""
    return Append(text=text)


def block(text: str) -> Block:
    """Text starting on a fresh line after a blank line."""
    return Block(text=text)


def event(name: str, data: dict[str, Any]) -> Event:
    """A `User CodeCompanion<name>` autocmd, ordered with the renders around it."""
    return Event(name=name, data=data)


def tool_output(call_id: str, for_llm: str, for_user: str | None) -> ToolOutput | None:
    """A result as the buffer shows it: the user's text, with what the model got folded below."""
    shown = for_llm if for_user is None else for_user
    if not shown:
        return None
    detail = for_llm if for_user and for_llm != for_user and "\n" in for_llm else None
    return ToolOutput(call_id=call_id, text=shown, detail=detail)


def _edited_calls(history: list[Message]) -> dict[str, ToolCall]:
    """The calls the user edited before they ran, as they ran (from their results)."""
    arguments = {
        m.tool_call_id: m.extra["arguments"]
        for m in history
        if m.role == "tool" and m.tool_call_id and isinstance(m.extra.get("arguments"), dict)
    }
    return {
        c.id: ToolCall(c.id, c.name, arguments[c.id])
        for m in history
        for c in m.tool_calls
        if c.id in arguments
    }


def replay(messages: Iterable[Message], adapter: str, model: str | None) -> list[RenderOp]:
    """A restored chat drawn with the same operations as a live one (tool lines, folds)."""
    history = list(messages)
    status = {
        m.tool_call_id: "error" if m.is_error else "success" for m in history if m.role == "tool"
    }
    ran = _edited_calls(history)
    ops: list[RenderOp] = [Replace(lines=[""])]
    in_answer = False
    for message in history:
        if message.role == "user" and message.visible:
            ops += _user_ops(message)
            in_answer = False
        elif message.role == "system" and (message.tag or "").startswith("compaction:"):
            summarised = message.extra.get("summarised", "earlier")
            ops.append(block(f"_[context: compacted {summarised} earlier messages here]_"))
        elif _shown_in_answer(message):
            if not in_answer:
                ops.append(header("llm", llm_header(adapter, model)))
                in_answer = True
            ops += _answer_ops(message, status, ran)
    ops.append(Ready(text=USER_HEADER))
    return ops


def _user_ops(message: Message) -> list[RenderOp]:
    """A user's turn: its heading, the text as typed, then its context lines."""
    typed = message.extra.get("typed")
    text = typed if isinstance(typed, str) else message.content or ""
    return [header("user", USER_HEADER), append(text), *replay_ops(message.extra.get("context"))]


def _shown_in_answer(message: Message) -> bool:
    """Whether a message is part of an answer on screen (calls are stored hidden, yet shown)."""
    return message.role in ("llm", "tool") and (message.visible or bool(message.tool_calls))


def _answer_ops(
    message: Message, status: Mapping[str | None, str], ran: Mapping[str, ToolCall]
) -> list[RenderOp]:
    """One message of an answer: a tool's output, its tool lines, or its text; then its changes."""
    ops: list[RenderOp] = []
    if message.role == "tool" and message.tool_call_id:
        shown = tool_output(
            message.tool_call_id, message.content or "", message.extra.get("for_user")
        )
        ops += [shown] if shown else []
    elif message.tool_calls:
        ops += [
            Tool(call_id=c.id, title=tool_title(ran.get(c.id, c)), status=status.get(c.id))
            for c in message.tool_calls
        ]
    elif message.content:
        # An answer with call blocks shows its text without them, as it did live.
        text = message.extra.get("shown", message.content)
        ops += [block(text)] if text.strip() else []
    changes = message.extra.get("changes")
    if isinstance(changes, str) and changes:  # what the turn's tools changed
        ops.append(block(f"_{changes}_"))
    return ops
