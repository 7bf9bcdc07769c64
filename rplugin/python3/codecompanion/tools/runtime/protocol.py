"""The typed seam between a chat and its tools: the one result each call gets (`BatchResults`),
capped (`capped`), what the tool system needs from the chat (`ToolChat`), how results and
progress reach it (`Reporter`), and what a running batch reads from its tool system
(`CallContext`). `ToolResult` itself is defined in messages.py."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...messages import Status, ToolCall, ToolResult
from ...ports import Approver, Editor, EventSink
from ..model.contract import Questions, ToolContext
from ..model.registry import ToolEntry

if TYPE_CHECKING:
    from ...hooks import ChatHooks
    from ...sandbox.commands import CommandSandbox
    from ...sandbox.settings import Mode
    from .approval_policy import ApprovalMemory

FINAL_STATUSES: tuple[Status, ...] = ("success", "error", "rejected", "cancelled", "timeout")

log = logging.getLogger("codecompanion.tools")


def capped(result: ToolResult, limit: int) -> ToolResult:
    """The result with both texts cut to `limit` characters; the uncut text kept as full_output."""
    for_llm, cut = cap_output(result.for_llm, limit)
    for_user = result.for_user
    if for_user is not None:
        for_user, _ = cap_output(for_user, limit)
    full = result.for_llm if cut else result.full_output
    return ToolResult(result.status, for_llm, for_user, full, result.detail)


def cap_output(text: str, limit: int = 50_000) -> tuple[str, bool]:
    """Keep the head and tail of `text` within `limit` characters, with a note of what was cut."""
    if len(text) <= limit:
        return text, False
    head_size = limit // 2
    tail_size = limit - head_size
    head = text[:head_size]
    tail = text[len(text) - tail_size :]
    # Prefer cutting at line ends when one is near, so no half lines are shown.
    newline = head.rfind("\n")
    if newline >= head_size * 4 // 5:
        head = head[: newline + 1]
    newline = tail.find("\n")
    if 0 <= newline <= tail_size // 5:
        tail = tail[newline + 1 :]
    cut = len(text) - len(head) - len(tail)
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}[... {cut} characters cut ...]\n{tail}", True


class ToolChat(Protocol):
    """What the tool system needs from a chat (`chat.Chat` implements it)."""

    id: str

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Store the one result of `call` (a role=tool message) and show it."""
        ...

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show the progress of `call` (pending, awaiting_approval, running, a final status)."""
        ...


class CallWatch(Protocol):
    """Told who writes while calls run (the chat's checkpoints): when a call whose writes are
    not listed runs (a command, an MCP or user tool), and each file a file tool writes."""

    def call_started(self, call_id: str) -> None:
        """The call's code starts."""
        ...

    def call_ended(self, call_id: str) -> None:
        """The call's code has finished."""
        ...

    def file_written(self, path: Path) -> None:
        """A file tool wrote or removed `path` (absolute)."""
        ...


class ChatForTools(ToolChat, Protocol):
    """Everything a tool system needs from its chat: results and progress, and the messages
    tool code adds (`chat.Chat` implements it)."""

    def add_tool_message(self, role: str, content: str, visible: bool) -> None:
        """Add a message tool code asked for (after the batch's results)."""
        ...


class Reporter:
    """Tells the chat and the `User` autocmds what happens; a failing view never stops a batch."""

    def __init__(self, chat: ToolChat, events: EventSink) -> None:
        self._chat = chat
        self._events = events
        self.watch: CallWatch | None = None  # set by the chat's checkpoints

    def running(self, call: ToolCall, listed: bool) -> None:
        """A call's code starts; `listed`: a tool that writes nothing or tells what it writes."""
        if self.watch is not None and not listed:
            self.watch.call_started(call.id)

    def ran(self, call: ToolCall, listed: bool) -> None:
        """The call's code has finished."""
        if self.watch is not None and not listed:
            self.watch.call_ended(call.id)

    def wrote(self, path: Path) -> None:
        """A file tool wrote or removed `path`."""
        if self.watch is not None:
            self.watch.file_written(path)

    def deliver(self, call: ToolCall, result: ToolResult) -> None:
        """Give the chat the call's result, then show its final status and fire ToolFinished."""
        try:
            self._chat.record_tool_result(call, result)
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
    hooks: ChatHooks | None  # run before and after each call (None: the chat has none)

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

    def tool_context(
        self, call: ToolCall, opts: Mapping[str, Any], asks: Questions, cancel: Callable[[], None]
    ) -> ToolContext:
        """What the code of `call` gets: the chat's root, editor, sandbox, environment, ..."""
        ...


class BatchResults:
    """The results of one batch's calls: one per call id, delivered once."""

    def __init__(
        self, calls: list[ToolCall], deliver: Callable[[ToolCall, ToolResult], None]
    ) -> None:
        self._calls = list(calls)
        self._deliver = deliver
        self.statuses: dict[str, Status] = {}

    def has(self, call_id: str) -> bool:
        """True once the call has its result."""
        return call_id in self.statuses

    def record(self, call: ToolCall, result: ToolResult) -> bool:
        """Deliver the call's result; False (nothing delivered) if it already has one."""
        if call.id in self.statuses:
            log.warning("call %s already has its result; a second one was dropped", call.id)
            return False
        self.statuses[call.id] = result.status
        self._deliver(call, result)
        return True

    def answer_rest(self, result_for: Callable[[ToolCall], ToolResult]) -> None:
        """Give each call still without one `result_for(call)`; synchronous, so safe in a cancel."""
        for call in self._calls:
            if call.id not in self.statuses:
                self.record(call, result_for(call))
