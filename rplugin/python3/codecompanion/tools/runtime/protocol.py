"""The typed seam between a chat and its tools: the one result a call gets (`ToolResult`), the
pieces tool code adds to it, what the tool system needs from the chat (`ToolChat`), how results
and progress reach it (`Reporter`), and what a running batch reads from its tool system
(`CallContext`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...messages import Status, ToolCall, ToolResult
from ...ports import Approver, Editor, EventSink
from ..model.registry import ToolEntry
from ..model.tool import as_text

if TYPE_CHECKING:
    from ...hooks import ChatHooks
    from ...sandbox.commands import CommandSandbox
    from ...sandbox.settings import Mode
    from .approval_policy import ApprovalMemory

FINAL_STATUSES: tuple[Status, ...] = ("success", "error", "rejected", "cancelled", "timeout")

log = logging.getLogger("codecompanion.tools")


@dataclass
class OutputBuffer:
    """What callbacks passed to `add_tool_output` for one call, until the call is answered."""

    call_id: str
    pieces: list[tuple[str, str | None]] = field(default_factory=list)
    closed: bool = False

    def add(self, for_llm: Any, for_user: Any = None) -> bool:
        """Keep one piece; False (and a log line) once the call has been answered."""
        if self.closed:
            log.warning("call %s: output added after the call was answered; ignored", self.call_id)
            return False
        self.pieces.append((as_text(for_llm), None if for_user is None else as_text(for_user)))
        return True

    def result(
        self, status: Status, default: tuple[str, str | None], notes: list[str], limit: int
    ) -> ToolResult:
        """Close the buffer and combine its pieces (or the default) into the call's result."""
        self.closed = True
        pieces = self.pieces or [default]
        for_llm = "\n\n".join(text for text, _ in pieces).strip() or "(no output)"
        if notes:
            for_llm = "\n".join(notes) + "\n\n" + for_llm
        for_user = None
        if any(user is not None for _, user in pieces):
            for_user = "\n\n".join(text if user is None else user for text, user in pieces)
        return capped(ToolResult(status, for_llm, for_user), limit)


def capped(result: ToolResult, limit: int) -> ToolResult:
    """The result with both texts cut to `limit` characters; the uncut text kept as full_output."""
    for_llm, cut = cap_output(result.for_llm, limit)
    for_user = result.for_user
    if for_user is not None:
        for_user, _ = cap_output(for_user, limit)
    full = result.for_llm if cut else result.full_output
    return ToolResult(result.status, for_llm, for_user, full, result.detail)


def joined(values: list[Any]) -> str:
    """Several cmds' data as one text."""
    texts = (as_text(value).rstrip("\n") for value in values)
    return "\n".join(text for text in texts if text)


def default_output(
    status: Status, name: str, data: list[Any], errors: list[Any], reason: str | None = None
) -> tuple[str, str | None]:
    """The (for_llm, for_user) text used when the tool's own output callback added nothing."""
    output = joined(data)
    if status == "success":
        return (output or f"The {name} tool ran and produced no output.", None)
    if status in ("error", "timeout"):
        text = f"The {name} tool failed:\n{joined(errors) or 'no error message'}"
        if output:
            text += f"\n\nOutput before the failure:\n{output}"
        return (text, None)
    if status == "rejected":
        text = f"The user rejected the {name} tool call."
        if reason:
            text += f' Their reason: "{reason}"'
        return (text, f"Rejected `{name}`" + (f": {reason}" if reason else ""))
    text = f"The user cancelled the {name} tool call; it did not finish."
    if output:
        text += f"\n\nOutput before the cancel:\n{output}"
    return (text, f"Cancelled `{name}`")


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


log = logging.getLogger("codecompanion.tools")


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
    buffers: dict[str, OutputBuffer]
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
