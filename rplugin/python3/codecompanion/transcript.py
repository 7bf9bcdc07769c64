"""How a chat looks in its buffer: render operations for headers, answers and tool calls."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .messages import Message, ToolCall
from .ports import RenderOp

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


def header(role: str, text: str) -> RenderOp:
    """A role header separated from what came before."""
    return RenderOp("header", {"role": role, "text": text})


def append(text: str) -> RenderOp:
    """Text appended where the buffer ends."""
    return RenderOp("append", {"text": text})


def block(text: str) -> RenderOp:
    """Text starting on a fresh line after a blank line."""
    return RenderOp("block", {"text": text})


def event(name: str, data: dict[str, Any]) -> RenderOp:
    """A `User CodeCompanion<name>` autocmd, ordered with the renders around it."""
    return RenderOp("event", {"name": name, "data": data})


def replay(messages: Iterable[Message], adapter: str, model: str | None) -> list[str]:
    """The buffer lines of a restored chat (visible messages only)."""
    lines: list[str] = []
    last_role: str | None = None
    for message in messages:
        if message.role == "system" or (message.role == "llm" and message.tool_calls):
            continue
        if message.role == "user" and message.visible:
            lines += ["", USER_HEADER, ""] if lines else [USER_HEADER, ""]
            lines += (message.content or "").split("\n")
            last_role = "user"
        elif message.role == "llm" and message.visible:
            if last_role not in ("llm", "tool"):
                lines += ["", llm_header(adapter, model), ""]
            lines += [""] + (message.content or "").split("\n")
            last_role = "llm"
        elif message.role == "tool":
            if last_role not in ("llm", "tool"):
                lines += ["", llm_header(adapter, model), ""]
            status = "error" if message.is_error else "success"
            lines += ["", f"**{message.tool_name}** [{status}]"]
            lines += (message.extra.get("for_user") or message.content or "").split("\n")
            last_role = "tool"
    lines += ["", USER_HEADER, "", ""]
    return lines
