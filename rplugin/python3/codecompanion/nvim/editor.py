"""The Editor port: loaded buffers, diagnostics and diff review, answered by Lua."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..ports import (
    BufferEdited,
    Diagnostic,
    FreshDiagnostics,
    HunkDecision,
    Reloaded,
    UnsavedChoice,
)
from ..tools.diffs import unified
from .bridge import Bridge

# A language server that is still starting when a file is loaded gets this long to attach
# before the wait for its diagnostics begins (the first file of a session pays it once).
START_WAIT = 10.0
_EDIT_STATUSES = ("saved", "unsaved", "changed", "closed")


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _diagnostics(items: Any) -> tuple[Diagnostic, ...]:
    """Lua's diagnostic tables as values (anything malformed is skipped)."""
    result = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        result.append(
            Diagnostic(
                line=int(item.get("line", 0)),
                col=int(item.get("col", 0)),
                severity=str(item.get("severity", "HINT")),
                message=str(item.get("message", "")),
                source=_text(item.get("source")),
                code=_text(item.get("code")),
            )
        )
    return tuple(result)


class NvimEditor:
    """Reads and edits loaded buffers, asks for their diagnostics, shows diffs for review."""

    live = True

    def __init__(self, bridge: Bridge, flush: Callable[[str], None] | None = None) -> None:
        self.bridge = bridge
        self.flush = flush or (lambda chat_id: None)  # draws what a chat has queued
        # Resolved paths of the files loaded in buffers, as Lua last pushed them (None until
        # the first push): a file no buffer holds is read from disk without asking Neovim.
        # Paths from the tools are resolved already and are compared as they are, as Lua does.
        self.loaded: frozenset[str] | None = None
        # Follow mode as Lua last said (setup's `follow`, then `:CodeCompanionChat Follow`).
        self.following = False
        # Whether a language server has attached to a buffer in this Neovim (Lua says so).
        self.servers = False
        # Per kind of file (its suffix): whether loading one found a language server (None
        # while the first such load is under way).
        self.kinds: dict[str, bool | None] = {}

    def set_loaded(self, paths: list[str], servers: bool = False) -> None:
        """Lua's list of the files loaded in buffers, and whether a language server has
        attached to one (sent whenever either changes)."""
        self.loaded = frozenset(str(p) for p in paths)
        if servers and not self.servers:
            # A server attached since: a kind of file that found none may find one now.
            self.kinds = {kind: found for kind, found in self.kinds.items() if found}
        self.servers = servers

    def may_check(self, path: str) -> bool:
        """A buffer holds `path`, or files of its kind may have a language server: the first
        file of a kind is loaded to learn whether a server starts for it (Neovim's FileType
        setup says, not this host); later ones only if one did. A round of twenty reads of a
        kind no server checks loads one file, once per Neovim, not twenty per round."""
        if self.loaded is None:
            return False
        if os.path.abspath(path) in self.loaded:
            return True
        kind = _kind(path)
        if kind not in self.kinds:
            self.kinds[kind] = None  # this read loads it; the others wait for its word
            return True
        return self.kinds[kind] is True

    def _learn(self, path: str, found: bool | None) -> None:
        """What loading `path` for its diagnostics found (None: the load failed)."""
        kind = _kind(path)
        if found is None:
            if kind in self.kinds and self.kinds[kind] is None:
                del self.kinds[kind]  # no word: the next file of its kind tries again
            return
        self.kinds[kind] = found or bool(self.kinds.get(kind))

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

    async def buffer_modified(self, path: str) -> bool | None:
        """Whether the loaded buffer has unsaved changes; None when none holds `path`."""
        if self.loaded is not None and os.path.abspath(path) not in self.loaded:
            return None
        value = await self.bridge.request_lua("codecompanion.editor", "buffer_modified", path)
        return value if isinstance(value, bool) else None

    async def write_buffer(
        self, chat_id: str, path: str, expected: list[str], lines: list[str], save: bool
    ) -> BufferEdited:
        """Edit the loaded buffer (one undo step), saving it when `save`."""
        request = {
            "path": path,
            "expected": expected,
            "lines": lines,
            "save": save,
            "chat_id": chat_id,
        }
        answer = await self.bridge.request_lua("codecompanion.editor", "write_buffer", request)
        if not isinstance(answer, dict) or answer.get("status") not in _EDIT_STATUSES:
            return BufferEdited("closed", "Neovim gave no answer")
        error = answer.get("error")
        return BufferEdited(
            answer["status"],
            error if isinstance(error, str) else None,
            _diagnostics(answer.get("before")),
        )

    async def ask_unsaved(self, chat_id: str, path: str) -> UnsavedChoice:
        """Ask the user (vim.ui.select) about an edit of a buffer with unsaved changes."""
        self.flush(chat_id)
        request = {"path": path, "chat_id": chat_id}
        answer = await self.bridge.ask_lua("codecompanion.editor", "ask_unsaved", request)
        return answer if answer in ("buffer", "save") else "reject"

    async def reload(self, paths: list[str]) -> Reloaded:
        """Reload the unmodified buffers of `paths` whose files changed on disk."""
        if self.loaded is not None:
            paths = [p for p in paths if os.path.abspath(p) in self.loaded]
        if not paths:
            return Reloaded()
        answer = await self.bridge.request_lua("codecompanion.editor", "reload", paths)
        if not isinstance(answer, dict):
            return Reloaded()
        before = answer.get("before")
        return Reloaded(
            _strings(answer.get("reloaded")),
            _strings(answer.get("kept")),
            {str(k): _diagnostics(v) for k, v in before.items()}
            if isinstance(before, dict)
            else {},
        )

    async def loaded_under(self, root: str) -> list[str]:
        """The files under `root` that buffers hold."""
        if self.loaded is not None:
            prefix = os.path.join(root, "")
            return sorted(p for p in self.loaded if p.startswith(prefix))
        answer = await self.bridge.request_lua("codecompanion.editor", "loaded_under", root)
        return list(_strings(answer))

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        """LSP diagnostics once the servers published for the buffer's text (or `wait` ends).

        Lua loads only a regular file of at most `max_bytes`; ToolError otherwise.
        """
        request = {
            "path": path,
            "min_severity": min_severity,
            "max_bytes": max_bytes,
            "wait_ms": int(wait * 1000),
            "start_ms": int(START_WAIT * 1000) if wait > 0 else 0,
        }
        answer = await self.bridge.ask_lua("codecompanion.editor", "diagnostics", request)
        if not isinstance(answer, dict) or isinstance(answer.get("error"), str):
            self._learn(path, None)
            if not isinstance(answer, dict):
                raise ToolError(f"Neovim gave no diagnostics for {path}.")
            raise ToolError(f"Neovim did not load {path}: {answer['error']}.")
        servers = _strings(answer.get("servers"))
        if answer.get("loaded") is True:
            # Without a wait a server still starting was not waited for: no word on the kind.
            self._learn(path, True if servers else (False if wait > 0 else None))
        return FreshDiagnostics(
            items=_diagnostics(answer.get("diagnostics")),
            servers=servers,
            fresh=answer.get("fresh") is True,
            timed_out=answer.get("timed_out") is True,
        )

    def follow(self, path: str, line: int | None = None) -> None:
        """Move the following window to `path`, when follow mode is on (else nothing is sent:
        a round of twenty reads would be twenty calls into Neovim)."""
        if self.following:
            self.bridge.notify_lua("codecompanion.editor", "follow", path, line)

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


def _kind(path: str) -> str:
    """A file's kind for language servers: its suffix (its name when it has none)."""
    name = os.path.basename(path)
    suffix = os.path.splitext(name)[1]
    return suffix.lower() if suffix else name
