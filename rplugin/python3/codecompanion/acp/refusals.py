"""A request of the agent's that the editor refuses: one line in the chat, and the same line as
the error the agent gets (its message, so agents that show only the message say why)."""

from __future__ import annotations

from typing import NoReturn

from acp import RequestError

from ..ports import ChatView

INVALID_PARAMS = -32602


def refuse(view: ChatView, line: str) -> NoReturn:
    """Say `line` in the chat and answer the agent's request with it."""
    view.notify(line, "warn")
    raise RequestError(INVALID_PARAMS, line, {"details": line})
