"""Rewind and review on the real screen, with Neovim's stock vim.ui.select."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import wait_for
from tests.support.tui import HAVE_TMUX, Tui, layout, write_config

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_the_rewind_picker_and_the_review_view_on_screen(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "notes.txt").write_text("alpha\nbeta\n")
    provider_server.enqueue(
        openai_tool_calls(
            [("c1", "create_file", {"filepath": "made.txt", "content": "made by the chat\n"})]
        ),
        openai_text("created it"),
    )
    screen = tui(
        config_file=write_config(tmp_path, provider_server), cwd=project, setup={"yolo": True}
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "make a file @{create_file}", "Escape", "Enter")
    screen.wait_screen("created it", "1 file changed: made.txt (new) +1")

    screen.keys("g", "D")  # review: the diff view and the quickfix list
    shown = screen.wait_screen("r revert hunk", "+made by the chat")
    assert "codecompanion://review" in shown or "--- made.txt" in shown
    items = screen.lua("return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())")
    assert items == ["made.txt hunk 1/1 +1 -0"]
    screen.keys("q")
    wait_for(lambda: screen.lua("return vim.bo.filetype") == "codecompanion")  # back in the chat

    screen.command("CodeCompanionChat Rewind")
    shown = screen.wait_screen("Rewind to just before", "make a file")
    assert "made.txt" in shown  # the files changed since that turn
    screen.keys("1", "Enter")
    screen.wait_screen("Code and conversation", "Conversation")
    screen.keys("2", "Enter")  # code only
    wait_for(lambda: not (project / "made.txt").exists())
    screen.wait_screen("rewound to before turn 1: 1 file restored")
    screen.keys("g", "Z")
    wait_for(lambda: (project / "made.txt").exists())
    assert (project / "made.txt").read_text() == "made by the chat\n"


def test_a_file_saved_while_the_rewind_asks_is_asked_about_again_on_screen(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, project: Path
) -> None:
    provider_server.enqueue(
        openai_tool_calls(
            [
                ("c1", "create_file", {"filepath": "c.txt", "content": "chat c\n"}),
                ("c2", "create_file", {"filepath": "x.txt", "content": "chat x\n"}),
            ]
        ),
        openai_text("made both"),
    )
    screen = tui(
        config_file=write_config(tmp_path, provider_server), cwd=project, setup={"yolo": True}
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "make two files @{create_file}", "Escape", "Enter")
    screen.wait_screen("made both", "2 files changed")
    (project / "c.txt").write_text("c by me\n")  # both changed c.txt: a question

    screen.lua("require('codecompanion').rewind({ turn = 1, conversation = false })")
    screen.wait_screen("c.txt was changed by you and by the chat", "Keep mine")
    (project / "x.txt").write_text("x saved while asked\n")  # another editor saves meanwhile
    screen.keys("1", "Enter")  # keep mine (c.txt)
    screen.wait_screen("x.txt was changed by you and by the chat", "Take the checkpoint")
    assert (project / "x.txt").read_text() == "x saved while asked\n"
    screen.keys("2", "Enter")  # take the checkpoint: x.txt goes (the chat made it)
    wait_for(lambda: not (project / "x.txt").exists())
    screen.wait_screen("kept as they are: c.txt")
    screen.keys("g", "Z")
    wait_for(lambda: (project / "x.txt").exists())
    assert (project / "x.txt").read_text() == "x saved while asked\n"
    assert (project / "c.txt").read_text() == "c by me\n"


def test_a_folder_mode_both_changed_shows_both_modes_on_screen(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "sub").mkdir()
    (project / "sub").chmod(0o755)
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": "chmod 700 sub"})]),
        openai_text("shut it"),
    )
    allow = "opts = {'tools': {'run_command': {'allow': ['*']}}}\n"
    screen = tui(
        config_file=write_config(tmp_path, provider_server, allow),
        cwd=project,
        setup={"yolo": True},
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "shut sub @{run_command}", "Escape", "Enter")
    screen.wait_screen("shut it")
    (project / "sub").chmod(0o750)  # the user too

    screen.lua("require('codecompanion').rewind({ turn = 1, conversation = false })")
    screen.wait_screen("sub was changed by you and by the chat", "Show the diff")
    screen.keys("3", "Enter")  # the diff, then the question again
    screen.wait_screen(
        "sub: yours is a folder (mode 750), the checkpoint's is a folder (mode 755)",
        "Take the checkpoint",
    )
    screen.keys("2", "Enter")
    screen.wait_screen("rewound to before turn 1")
    assert (project / "sub").stat().st_mode & 0o777 == 0o755
    assert layout(screen) == ["", "[CodeCompanion] 2", "rewind-diff*"]
    screen.keys("q")  # the diff closes: back in the chat it was opened from
    wait_for(lambda: layout(screen) == ["", "[CodeCompanion] 2*"])
    screen.keys("g", "Z")
    wait_for(lambda: (project / "sub").stat().st_mode & 0o777 == 0o750)
