"""Ports: what the core needs from the editor. `nvim/` implements them; tests use small fakes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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
class FreshDiagnostics:
    """A file's diagnostics, and whether its language servers published them for its text."""

    items: tuple[Diagnostic, ...] = ()
    servers: tuple[str, ...] = ()  # the servers attached to its buffer; none: nobody checked
    fresh: bool = False  # published for the buffer's current text
    timed_out: bool = False  # the wait ended without a publish


UnsavedChoice = Literal["buffer", "save", "reject"]


@dataclass(frozen=True)
class BufferEdited:
    """How an edit through a loaded buffer went: `saved` to its file, left `unsaved`, refused
    because the buffer `changed` since it was read, or `closed` meanwhile."""

    status: Literal["saved", "unsaved", "changed", "closed"]
    error: str | None = None  # why a save that was asked for did not happen
    before: tuple[Diagnostic, ...] = ()  # the buffer's diagnostics before the edit


@dataclass(frozen=True)
class Reloaded:
    """Loaded buffers brought up to date with their files (with their diagnostics before),
    and those kept as they were (they hold unsaved changes)."""

    reloaded: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    before: Mapping[str, tuple[Diagnostic, ...]] = field(default_factory=dict)


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

    # True for Neovim itself (windows to follow in, language servers to ask); False for the
    # command line's stand-in, which the tools then ask for neither.
    live: bool

    async def buffer_lines(self, path: str) -> list[str] | None:
        """The lines of the loaded buffer for `path`, or None when it is not loaded.

        An unmodified buffer whose file changed on disk is reloaded first.
        """
        ...

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        """Replace a loaded buffer's lines (one undo step) without saving; False if not loaded."""
        ...

    async def buffer_modified(self, path: str) -> bool | None:
        """Whether the loaded buffer for `path` has unsaved changes; None when not loaded."""
        ...

    async def write_buffer(
        self, chat_id: str, path: str, expected: list[str], lines: list[str], save: bool
    ) -> BufferEdited:
        """Replace the loaded buffer's `expected` lines with `lines` (one undo step) and save
        it when `save`; refused when the buffer no longer holds `expected`."""
        ...

    async def ask_unsaved(self, chat_id: str, path: str) -> UnsavedChoice:
        """Ask what to do with an edit of a buffer that holds the user's unsaved changes."""
        ...

    async def reload(self, paths: list[str]) -> Reloaded:
        """Bring the loaded buffers of `paths` up to date with their files (unmodified ones)."""
        ...

    async def loaded_under(self, root: str) -> list[str]:
        """The files under `root` loaded in buffers."""
        ...

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        """LSP diagnostics for `path` at `min_severity` or worse, once its servers published
        for its current text or after `wait` seconds (at once when none is attached).

        A file not loaded yet is loaded (so its servers attach) only if it is a regular file of
        at most `max_bytes`.
        """
        ...

    def may_check(self, path: str) -> bool:
        """Whether a language server may check `path` at once: a buffer holds it, or a server
        has attached in the editor; never waits."""
        ...

    def follow(self, path: str, line: int | None = None) -> None:
        """Show `path` at `line` in a window when follow mode is on; never waits."""
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
