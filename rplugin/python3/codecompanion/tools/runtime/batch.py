"""What a batch of calls reads from its tool system, and how it reports to the chat."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...messages import ToolCall
from ...ports import Approver, Editor, EventSink
from ...sandbox.settings import Mode
from ..model.registry import ToolEntry
from .approval_memory import ApprovalMemory
from .results import CallResult, OutputBuffer

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox

log = logging.getLogger("codecompanion.tools")


class ToolChat(Protocol):
    """What the tool system needs from a chat (`chat.Chat` implements it)."""

    id: str

    def record_tool_result(
        self,
        call: ToolCall,
        for_llm: str,
        for_user: str | None,
        is_error: bool,
        full_output: str | None,
    ) -> None:
        """Store the one result of `call` (a role=tool message) and show `for_user`."""
        ...

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show the progress of `call` (pending, awaiting_approval, running, a final status)."""
        ...


class Reporter:
    """Tells the chat and the `User` autocmds what happens; a failing view never stops a batch."""

    def __init__(self, chat: ToolChat, events: EventSink) -> None:
        self._chat = chat
        self._events = events

    def deliver(self, call: ToolCall, result: CallResult) -> None:
        """Give the chat the call's result, then show its final status and fire ToolFinished."""
        try:
            self._chat.record_tool_result(
                call, result.for_llm, result.for_user, result.is_error, result.full_output
            )
        except Exception:
            log.exception("chat %s: recording the result of %s failed", self._chat.id, call.id)
        self.status(call, result.status, result.detail)
        data = {"id": self._chat.id, "name": call.name, "call_id": call.id, "status": result.status}
        self.fire("ToolFinished", data)

    def status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show a call's progress in the chat."""
        try:
            self._chat.tool_status(call, status, detail)
        except Exception:
            log.exception("chat %s: tool_status failed", self._chat.id)

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Fire `User CodeCompanion<name>`."""
        try:
            self._events.fire(name, data)
        except Exception:
            log.exception("event %s failed", name)


class CallContext(Protocol):
    """The tool system as a batch sees it; it is also the `tools` argument of tool code."""

    cwd: Path
    opts: dict[str, Any]
    yolo: bool
    editor: Editor | None
    sandbox: CommandSandbox | None
    approvals: ApprovalMemory
    approver: Approver
    reporter: Reporter
    buffers: dict[str, OutputBuffer]

    @property
    def chat_id(self) -> str:
        """The chat's id."""
        ...

    @property
    def mode(self) -> Mode:
        """The chat's permission mode."""
        ...

    def offered_entry(self, name: str) -> ToolEntry | None:
        """The entry of `name` if the chat offers it and it is enabled."""
        ...

    def not_offered_message(self, name: str) -> str:
        """The error result for a call of a tool the chat does not offer."""
        ...
