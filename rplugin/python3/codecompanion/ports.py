"""Ports: what the core needs from the editor. `nvim/` implements them; tests use small fakes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .render_ops import Level, RenderOp

ApprovalChoice = Literal["approve", "always", "approve_all", "reject", "never", "cancel", "edit"]


@dataclass(frozen=True)
class ApprovalRequest:
    """A question for the user about one pending tool call."""

    chat_id: str
    tool_name: str
    call_id: str
    prompt: str
    arguments: dict[str, Any]
    choices: tuple[ApprovalChoice, ...] = ("approve", "always", "reject", "cancel", "edit")
    editable_text: str | None = None  # JSON of the arguments, or the command line, for "edit"
    always_scope: Literal["tool", "command", "arguments"] = "tool"  # what "always" remembers


@dataclass(frozen=True)
class ApprovalDecision:
    """The user's answer; `reason` for reject, `edited` text for edit."""

    choice: ApprovalChoice
    reason: str | None = None
    edited: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    """One LSP diagnostic as Neovim reports it (0-based line and column)."""

    line: int
    col: int
    severity: str
    message: str
    source: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class HunkDecision:
    """Which hunks of a proposed change the user accepted (indexes into the diff's hunks)."""

    accepted: tuple[int, ...]
    rejected: tuple[int, ...] = ()
    reason: str | None = None


class Approver(Protocol):
    """Asks the user to approve a tool call; never blocks the editor."""

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """Return the user's decision for one call."""
        ...

    async def confirm(self, chat_id: str, question: str) -> bool:
        """A yes/no question (e.g. a path outside the project)."""
        ...


class Editor(Protocol):
    """Access to the editor's buffers and diagnostics."""

    async def buffer_lines(self, path: str) -> list[str] | None:
        """The lines of the loaded buffer for `path`, or None when it is not loaded."""
        ...

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        """Replace a loaded buffer's lines (one undo step) without saving; False if not loaded."""
        ...

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None
    ) -> list[Diagnostic]:
        """LSP diagnostics for `path` at `min_severity` or worse.

        A file not loaded yet is loaded only if it is a regular file of at most `max_bytes`.
        """
        ...

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision:
        """Show a diff and let the user accept or reject each hunk (`note`: why asked again)."""
        ...


class EventSink(Protocol):
    """Fires the `User` autocmds integrations listen to."""

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Fire `User CodeCompanion<name>` with `data`; never blocks."""
        ...


class ChatView(Protocol):
    """The chat buffer as the core sees it: batched renders and small notices."""

    def render(self, ops: list[RenderOp]) -> None:
        """Apply operations in order (one call into Lua per batch)."""
        ...

    def notify(self, message: str, level: Level = "info") -> None:
        """Show one line to the user."""
        ...

    def flush(self) -> None:
        """Send every queued operation now."""
        ...
