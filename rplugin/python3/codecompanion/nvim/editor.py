"""The Editor port: loaded buffers, diagnostics and diff review, answered by Lua."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..ports import Diagnostic, HunkDecision
from ..tools.diffs import unified
from .bridge import Bridge


class NvimEditor:
    """Reads and edits loaded buffers without saving them; shows diffs for review."""

    def __init__(self, bridge: Bridge, flush: Callable[[str], None] | None = None) -> None:
        self.bridge = bridge
        self.flush = flush or (lambda chat_id: None)  # draws what a chat has queued
        # Resolved paths of the files loaded in buffers, as Lua last pushed them (None until
        # the first push): a file no buffer holds is read from disk without asking Neovim.
        # Paths from the tools are resolved already and are compared as they are, as Lua does.
        self.loaded: frozenset[str] | None = None

    def set_loaded(self, paths: list[str]) -> None:
        """Lua's list of the files loaded in buffers (sent whenever it changes)."""
        self.loaded = frozenset(str(p) for p in paths)

    async def buffer_lines(self, path: str) -> list[str] | None:
        """The loaded buffer's lines, or None."""
        if self.loaded is not None and os.path.abspath(path) not in self.loaded:
            return None
        lines = await self.bridge.request_lua("codecompanion.editor", "buffer_lines", path)
        return [str(line) for line in lines] if isinstance(lines, list) else None

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        """Replace the buffer's changed lines in one undo step, without writing the file."""
        done = await self.bridge.request_lua(
            "codecompanion.editor", "set_buffer_lines", path, lines
        )
        return bool(done)

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None
    ) -> list[Diagnostic]:
        """LSP diagnostics; Lua waits briefly for a fresh buffer's language server.

        Lua loads only a regular file of at most `max_bytes`; ToolError otherwise.
        """
        items = await self.bridge.ask_lua(
            "codecompanion.editor", "diagnostics", path, min_severity, max_bytes
        )
        if isinstance(items, dict) and isinstance(items.get("error"), str):
            raise ToolError(f"Neovim did not load {path}: {items['error']}.")
        result = []
        for item in items if isinstance(items, list) else []:
            result.append(
                Diagnostic(
                    line=int(item.get("line", 0)),
                    col=int(item.get("col", 0)),
                    severity=str(item.get("severity", "HINT")),
                    message=str(item.get("message", "")),
                    source=item.get("source") if isinstance(item.get("source"), str) else None,
                    code=item.get("code") if isinstance(item.get("code"), str) else None,
                )
            )
        return result

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision:
        """Show a diff and ask about each hunk (indexes into `diffs.hunks(old, new)`)."""
        diff, rows = unified(path, old, new)
        hunks = [{"row": row} for row in rows]
        if not hunks:
            return HunkDecision(accepted=())
        self.flush(chat_id)  # what the model wrote before the edit is drawn before the question
        answer: Any = await self.bridge.ask_lua(
            "codecompanion.editor",
            "review",
            {"path": path, "diff": diff, "hunks": hunks, "chat_id": chat_id, "note": note},
        )
        if not isinstance(answer, dict):
            return HunkDecision(accepted=(), rejected=tuple(range(len(hunks))))
        reason = answer.get("reason")
        return HunkDecision(
            accepted=tuple(int(i) for i in answer.get("accepted") or []),
            rejected=tuple(int(i) for i in answer.get("rejected") or []),
            reason=reason if isinstance(reason, str) else None,
        )
