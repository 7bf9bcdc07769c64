"""Reading what a user would see and what was saved, for the fault suites."""

from __future__ import annotations

import json
import os
import signal
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


def host_pid(ed: Editor) -> int:
    return int(ed.lua("return vim.fn.jobpid(require('codecompanion.host').channel())"))


def kill_host(ed: Editor) -> int:
    pid = host_pid(ed)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: ed.lua("return require('codecompanion.host').channel()") is None)
    return pid


def logged(ed: Editor, *words: str) -> list[str]:
    """The plugin's lines holding every one of `words`: in the message area, or in the log
    (where a notice cut to one line of the message area is whole)."""
    log = ed.tmp / "state" / "nvim" / "codecompanion.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    lines = codecompanion_lines(ed) + text.splitlines()
    return [line for line in lines if all(word in line for word in words)]


def saved_chat_file(ed: Editor) -> Path:
    bufnr = ed.open_chat()
    ed.send("remember 42")
    ed.wait_event("CodeCompanionChatDone")
    files = wait_for(lambda: sorted(chats_folder(ed).glob("*.json")))
    assert len(files) == 1
    ed.nvim.command(f"bwipeout! {bufnr}")
    # A round trip: the host has handled the close (and its last save) before the file is hurt.
    ed.lua("return { require('codecompanion.host').request('sync') }")
    return files[0]
