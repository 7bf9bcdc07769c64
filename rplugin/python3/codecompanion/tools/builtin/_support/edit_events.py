"""`User CodeCompanionFileEdited` for every file a builtin tool creates, edits or deletes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...model.tool import Tool


def first_changed_line(old: Sequence[str], new: Sequence[str]) -> int:
    """The 1-based number of the first line that differs (one past the shorter at the end)."""
    for number, (before, after) in enumerate(zip(old, new, strict=False), 1):
        if before != after:
            return number
    return min(len(old), len(new)) + 1


def file_edited(tool: Tool, path: Path, line: int | None = None) -> None:
    """Fire the event with CodeCompanion's data: `path`, `tool` and, for an edit, the first
    changed `line` (Lua adds the file's `bufnr` when it is loaded)."""
    reporter = getattr(tool.tools, "reporter", None)
    if reporter is None:  # a tool run outside a chat (tests, /fetch)
        return
    data: dict[str, Any] = {"id": tool.tools.chat_id, "path": str(path), "tool": tool.name}
    if line is not None:
        data["line"] = line
    reporter.fire("FileEdited", data)
