"""Reading what a user would see and what was saved, for the fault suites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.nvim import Editor, wait_for

ERROR_MARKERS = ("Traceback", "stack traceback", "E5108", "Error executing", "Exception")


def chats_folder(ed: Editor) -> Path:
    """Where the editor's host saves chats."""
    return ed.tmp / "data" / "nvim" / "codecompanion" / "chats"


def saved_chat(ed: Editor) -> dict[str, Any]:
    """The one saved chat."""
    files = sorted(chats_folder(ed).glob("*.json"))
    assert len(files) == 1, files
    data: dict[str, Any] = json.loads(files[0].read_text())
    return data


def messages_area(ed: Editor) -> str:
    """What `:messages` shows."""
    return str(ed.nvim.exec_lua("return vim.fn.execute('messages')"))


def codecompanion_lines(ed: Editor) -> list[str]:
    """The plugin's lines in the message area."""
    return [line for line in messages_area(ed).splitlines() if line.startswith("codecompanion:")]


def one_clear_line(ed: Editor, *words: str) -> str:
    """The single plugin line naming the problem (all `words` in it); no traceback anywhere."""
    wait_for(lambda: [ln for ln in codecompanion_lines(ed) if all(w in ln for w in words)], 5)
    area = messages_area(ed)
    for marker in ERROR_MARKERS:
        assert marker not in area, area
    matching = [ln for ln in codecompanion_lines(ed) if all(w in ln for w in words)]
    assert len(matching) == 1, area
    return matching[0]


def turn_done(ed: Editor, count: int = 1, timeout: float = 10.0) -> None:
    """Wait for the `count`th ChatDone and the fresh `## Me` prompt."""
    ed.wait_event("CodeCompanionChatDone", count, timeout)
    wait_for(lambda: "## Me" in ed.lines()[-3:], 5)
