"""`fs/read_text_file` and `fs/write_text_file` (protocol v1; the v2 draft drops them): files
as the editor has them, and an agent's writes through the diff review and into checkpoints.

A read gets a loaded buffer's text, unsaved edits included. A write is reviewed hunk by hunk
(unless the chat's mode spares reviews), captured before and after like a tool round (so
review, rewind and undo cover it), written to disk, and given to an open buffer as one undo
step. Paths outside the project are asked about, as for the chat's own tools.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import NoReturn

from acp.schema import ReadTextFileResponse, WriteTextFileResponse

from acp import RequestError

from ..chat.driver import Session
from ..errors import ToolError
from ..ports import Editor
from ..tools.builtin._support.file_writes import create_new, rewrite_file
from ..tools.builtin._support.paths import display_path, project_root, resolve_path
from ..tools.builtin._support.text_files import FileText, join_endings, read_source, split_lines
from ..tools.diffs import apply_hunks, hunks
from ..tools.runtime.approval_policy import Question, decide
from .refusals import INVALID_PARAMS, refuse

# Characters of one write at most (a bigger one is refused, in one line).
MAX_WRITE = 20_000_000


class AgentFiles:
    """One chat's files as its agent reads and writes them."""

    def __init__(self, chat: Session, editor: Editor | None, agent: str) -> None:
        self.chat = chat
        self.editor = editor
        self.agent = agent

    async def read_text_file(
        self, path: str, line: int | None, limit: int | None
    ) -> ReadTextFileResponse:
        """The file's text (a loaded buffer's when there is one), `line` (1-based) on,
        `limit` lines at most."""
        target, shown = await self._resolve(path, "reading a file for the agent", writes=False)
        try:
            source = await read_source(self.editor, target, shown)
        except ToolError as exc:
            self._refuse(str(exc))
        lines = source.text.split("\n")
        first = max((line or 1) - 1, 0)
        chosen = lines[first : first + limit] if limit is not None else lines[first:]
        return ReadTextFileResponse(content="\n".join(chosen))

    async def write_text_file(self, path: str, content: str) -> WriteTextFileResponse:
        """Review, capture, write; a refusal is the agent's error and one line in the chat."""
        if len(content) > MAX_WRITE:
            size = f"{len(content):,}"
            self._refuse(f"{self.agent} wanted to write {size} characters to {path}: too big")
        target, shown = await self._resolve(path, "writing a file for the agent", writes=True)
        source: FileText | None = None
        if target.exists():
            try:
                source = await read_source(self.editor, target, shown)
            except ToolError as exc:
                self._refuse(str(exc))
        old = source.lines if source is not None else []
        new = split_lines(content)
        kept = await self._reviewed(str(target), old, new)
        if kept is None:
            self._refuse(f"the user rejected {self.agent}'s write to {shown}")
        text = "\n".join(kept) + ("\n" if kept and (content.endswith("\n") or kept != new) else "")
        checkpoints = self.chat.checkpoints
        if checkpoints is not None:  # captured before and after, as a tool round is
            await checkpoints.before_tools()
        try:
            await self._write(target, source, text, shown)
        finally:
            if checkpoints is not None:
                checkpoints.file_written(target)  # the agent's change, as a file tool tells it
                checkpoints.after_tools()
        if kept != new:
            line = f"the user accepted only part of the change to {shown}: read it again"
            raise RequestError(INVALID_PARAMS, line, {"details": line})
        return WriteTextFileResponse()

    async def _resolve(self, raw: str, purpose: str, writes: bool) -> tuple[Path, str]:
        """The path in the project (one outside it asked about, as for the chat's tools)."""
        tools = self.chat.tools
        try:
            path = await resolve_path(
                tools, raw, must_exist=not writes, purpose=purpose, writes=writes
            )
        except ToolError as exc:
            self._refuse(str(exc))
        return path, display_path(project_root(tools), path)

    async def _reviewed(self, path: str, old: list[str], new: list[str]) -> list[str] | None:
        """The lines the user let through (None: nothing); the review spared by the chat's mode."""
        changes = await asyncio.to_thread(hunks, old, new)
        if not changes:
            return new
        _rule, ruling = await decide(Question("diff_review", path, None), self.chat.tools)
        if ruling.action != "ask" or self.editor is None:
            return new
        decision = await self.editor.review_diff(self.chat.id, path, old, new)
        accepted = {i for i in decision.accepted if 0 <= i < len(changes)}
        if not accepted:
            return None
        return apply_hunks(old, new, accepted)

    async def _write(self, path: Path, source: FileText | None, text: str, shown: str) -> None:
        """To disk (confined: never through a link out of the project), then to the open
        buffer as one undo step."""
        try:
            if source is not None:
                data = join_endings(source, text).encode("utf-8")
                digest = source.on_disk.digest if source.on_disk else None
                await asyncio.to_thread(rewrite_file, path, data, digest, shown)
            else:
                await asyncio.to_thread(create_new, path, text.encode("utf-8"), shown)
        except (ToolError, OSError) as exc:
            self._refuse(f"{self.agent} could not write {shown}: {exc}")
        self.chat.tools.reporter.wrote(path)  # the checkpoints: the chat's change, as left
        if self.editor is not None and await self.editor.buffer_lines(str(path)) is not None:
            await self.editor.set_buffer_lines(str(path), split_lines(text))
        self.chat.fire("FileEdited", path=str(path), agent=self.agent)

    def _refuse(self, line: str) -> NoReturn:
        refuse(self.chat.view, line)
