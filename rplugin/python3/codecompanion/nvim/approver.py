"""Approvals and yes/no questions asked through vim.ui.select in Lua."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any

from ..ports import ApprovalDecision, ApprovalRequest
from .bridge import Bridge

log = logging.getLogger("codecompanion.approvals")

_CHOICES = {"approve", "always", "approve_all", "reject", "never", "cancel", "edit"}


class NvimApprover:
    """The Approver port: Lua asks, answers with a notification; nothing blocks."""

    def __init__(self, bridge: Bridge, flush: Callable[[str], None] | None = None) -> None:
        self.bridge = bridge
        # Sends what a chat has queued for its buffer (text streamed before the call).
        self.flush = flush or (lambda chat_id: None)

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """Show the choices for one call and await the user's decision.

        What the model wrote before the call is drawn first: with a fast provider it may still
        wait for the next frame, and the user would approve without having read it.
        """
        self.flush(request.chat_id)
        payload: dict[str, Any] = dataclasses.asdict(request)
        payload["choices"] = list(request.choices)
        payload["preview"] = argument_lines(request.arguments)
        payload["editable_kind"] = (
            "json" if (request.editable_text or "").lstrip()[:1] in "{[" else "text"
        )
        try:
            answer = await self.bridge.ask_lua("codecompanion.approval", "ask", payload)
        except BaseException:
            # Stopped while asking: close what the prompt opened (the edit buffer); a late
            # answer finds no waiting request and is dropped.
            self.bridge.notify_lua("codecompanion.approval", "dismiss")
            raise
        return _decision(answer)

    async def confirm(self, chat_id: str, question: str) -> bool:
        """A yes/no question (after what the chat has queued is drawn)."""
        self.flush(chat_id)
        answer = await self.bridge.ask_lua("codecompanion.approval", "confirm", question)
        return _decision(answer).choice == "approve"


def argument_lines(arguments: dict[str, Any]) -> list[str]:
    """Every argument of a call, whole: `key: value`, multi-line values indented below."""
    lines: list[str] = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        rows = text.split("\n")
        if len(rows) == 1:
            lines.append(f"{key}: {text}")
        else:
            lines.append(f"{key}:")
            lines += [f"  {row}" for row in rows]
    return lines


def _decision(answer: Any) -> ApprovalDecision:
    """Read Lua's answer; anything unexpected counts as cancel."""
    if not isinstance(answer, dict):
        return ApprovalDecision("cancel")
    choice = answer.get("choice")
    if choice not in _CHOICES:
        log.warning("unexpected approval answer %r", answer)
        return ApprovalDecision("cancel")
    reason = answer.get("reason")
    edited = answer.get("edited")
    return ApprovalDecision(
        choice,
        reason if isinstance(reason, str) else None,
        edited if isinstance(edited, str) else None,
    )
