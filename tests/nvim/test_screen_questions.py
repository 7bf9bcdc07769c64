"""Keys a user types at a question and while a chat works, on the real screen (tmux, stock
vim.ui.select, 80×24 and 200×50): `q` rejects a change without a second prompt, `:` runs an Ex
command and asks again, and closing the chat's window says what it stopped. No action gives a
"Press ENTER" prompt."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import wait_for
from tests.support.tui import HAVE_TMUX, Tui, write_config

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
SIZES = [(80, 24), (200, 50)]


def asked(
    tui: Callable[..., Tui],
    tmp_path: Path,
    server: LoopbackServer,
    size: tuple[int, int],
    call: tuple[str, dict[str, Any]],
) -> Tui:
    """A chat filling the screen whose model makes `call`; the question on screen."""
    project = tmp_path / "project"
    project.mkdir()
    server.enqueue(openai_tool_calls([("c1", *call)], text="A call."), openai_text("done"))
    screen = tui(
        width=size[0],
        height=size[1],
        setup={"window": {"layout": "buffer"}},
        config_file=write_config(tmp_path, server),
        cwd=project,
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", f"@{{{call[0]}}} go", "Escape", "Enter")
    screen.wait_screen("Type number")
    return screen


@pytest.mark.parametrize("size", SIZES)
def test_q_at_a_change_rejects_it_with_no_second_prompt(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, size: tuple[int, int]
) -> None:
    made = {"filepath": "a.txt", "content": "one\ntwo\nthree\n"}
    screen = asked(tui, tmp_path, provider_server, size, ("create_file", made))
    assert "Apply 1 change to a.txt?" in screen.screen()
    screen.keys("q")
    shown = screen.wait_screen("Rejected creating `a.txt`", "done")
    assert "Reason" not in shown and "Press ENTER" not in shown
    assert not (tmp_path / "project" / "a.txt").exists()


@pytest.mark.parametrize("size", SIZES)
def test_an_ex_command_at_a_question_runs_and_the_question_comes_back(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, size: tuple[int, int]
) -> None:
    screen = asked(tui, tmp_path, provider_server, size, ("run_command", {"cmd": "echo hi"}))
    # The preview shows what the model sent, not the optional arguments it left out.
    assert "cmd: echo hi" in screen.screen() and "unconfined" not in screen.screen()
    screen.keys(":", "let g:typed = 42", "Enter")
    wait_for(lambda: screen.lua("return vim.g.typed") == 42)
    shown = screen.wait_screen("Run the command `echo hi`?", "Type number")
    assert "Press ENTER" not in shown
    screen.keys("1", "Enter")  # the call still waited: approved now, it runs
    shown = screen.wait_screen("done")
    assert "Cancelled" not in shown and "Press ENTER" not in shown


@pytest.mark.parametrize("size", SIZES)
def test_closing_the_chat_window_mid_answer_says_what_it_stopped(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer, size: tuple[int, int]
) -> None:
    provider_server.enqueue(openai_text("tock " * 200, chunks=200, delay=0.05))
    screen = tui(width=size[0], height=size[1], config_file=write_config(tmp_path, provider_server))
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "go", "Escape", "Enter")
    screen.wait_screen("tock")
    screen.command("q")
    shown = screen.wait_screen("its request stopped")
    assert "Press ENTER" not in shown
    history = str(screen.lua("return vim.fn.execute('messages')"))
    assert "(:CodeCompanionChat Toggle hides a chat and lets it go on)" in history
