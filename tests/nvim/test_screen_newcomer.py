"""What a new user sees in the message area with the stock UI: one line, never "Press ENTER"
(demo chat at 80×24, a wrong adapter, an unknown tool and an HTTP error at 200 columns), and
a one-line hint for CodeCompanion.nvim's :CodeCompanion and :CodeCompanionActions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback import LoopbackServer, Turn, openai_text
from tests.nvim.test_screen_review import write_config
from tests.nvim.tui import HAVE_TMUX, Tui

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def last_line(screen: Tui) -> str:
    return screen.screen().rstrip("\n").splitlines()[-1]


def test_demo_chat_and_a_wrong_adapter_take_one_line_at_80_columns(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    screen = tui(width=80)
    screen.tmux("resize-window", "-t", screen.session, "-x", "80", "-y", "24")
    screen.command("CodeCompanionChat")
    shown = screen.wait_screen("## Me", "codecompanion: offline demo")
    assert "Press ENTER" not in shown
    assert last_line(screen).startswith("codecompanion: offline demo: no provider")
    screen.command("CodeCompanionChat adapter=nope")
    shown = screen.wait_screen('no adapter "nope"')
    assert "Press ENTER" not in shown and last_line(screen).endswith("…")
    # The whole line is in the log.
    log = (tmp_path / "state" / "nvim" / "codecompanion.log").read_text()
    assert 'no adapter "nope": valid names are' in log and "openai" in log
    screen.command("CodeCompanion explain this")
    shown = screen.wait_screen(":CodeCompanionChat [prompt] opens a chat")
    assert "E464" not in shown and "E492" not in shown and "Press ENTER" not in shown
    screen.command("CodeCompanionActions")
    shown = screen.wait_screen(":CodeCompanionChat Toggle|Restore|Add")
    assert "E492" not in shown and "Press ENTER" not in shown


def test_unknown_tool_and_http_error_take_one_line_at_200_columns(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    long_reason = "the upstream model is overloaded; " * 12
    provider_server.enqueue(openai_text("fine"), Turn.error(400, long_reason))
    screen = tui(
        width=200,
        setup={"window": {"layout": "buffer"}},
        config_file=write_config(tmp_path, provider_server),
        cwd=tmp_path,
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "use @{no_such_tool} please", "Escape", "Enter")
    shown = screen.wait_screen("unknown tool @{no_such_tool}", "fine")
    assert "Press ENTER" not in shown
    screen.keys("G", "o", "again", "Escape", "Enter")
    shown = screen.wait_screen("HTTP 400")
    assert "Press ENTER" not in shown
    assert "HTTP 400" in last_line(screen)
