"""Chat windows on the real screen: reuse, layouts, Toggle in place, and the view after a clear."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.nvim import wait_for
from tests.support.tui import HAVE_TMUX, Tui, layout, write_config

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_chats_reuse_their_window_and_toggle_in_place(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    screen = tui(cwd=tmp_path)
    screen.command("edit a.txt")
    for _ in range(3):
        screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    wins = layout(screen)
    assert len(wins) == 2 and wins[0] == "a.txt" and str(wins[1]).startswith("[CodeCompanion]")
    shown = screen.screen()
    assert shown.splitlines()[0].startswith("alpha") and "│## Me" in shown.splitlines()[0]
    width = screen.lua("return vim.api.nvim_win_get_width(vim.fn.win_getid(2))")
    screen.command("CodeCompanionChat Toggle")
    wait_for(lambda: layout(screen) == ["a.txt*"])
    assert "## Me" not in screen.screen()
    screen.command("CodeCompanionChat Toggle")
    shown = screen.wait_screen("│## Me")
    assert layout(screen) == wins
    assert screen.lua("return vim.api.nvim_win_get_width(vim.fn.win_getid(2))") == width


def test_float_and_horizontal_layouts(tui: Callable[..., Tui], tmp_path: Path) -> None:
    screen = tui(setup={"window": {"layout": "float", "width": 60, "height": 10}})
    screen.command("CodeCompanionChat")
    shown = screen.wait_screen("CodeCompanion", "## Me")
    assert any("╭" in row and "CodeCompanion" in row for row in shown.splitlines())
    config = screen.lua("return vim.api.nvim_win_get_config(0)")
    assert config["relative"] == "editor" and config["width"] == 60 and config["height"] == 10
    screen.command("CodeCompanionChat")  # a second chat takes the same float
    assert screen.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 2
    other = tui(setup={"window": {"layout": "horizontal", "height": 8}})
    other.command("CodeCompanionChat")
    other.command("CodeCompanionChat")
    rows = other.wait_screen("## Me").splitlines()
    assert other.lua("return vim.api.nvim_win_get_height(0)") == 8
    assert other.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 2
    assert any(row.startswith("## Me") for row in rows[10:])  # the bottom split


def test_clear_shows_an_empty_chat_under_me_and_keeps_the_saved_one(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    long_answer = "\n".join(f"line {i} of a long answer" for i in range(80))
    provider_server.enqueue(openai_text(long_answer, chunks=4))
    screen = tui(config_file=write_config(tmp_path, provider_server))
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "tell me a lot", "Escape", "Enter")
    screen.wait_screen("line 79 of a long answer")
    old_id = screen.lua("return vim.b.codecompanion_chat_id")
    screen.keys("G", "g", "x")  # from the end of a long answer
    wait_for(lambda: "line 79" not in screen.screen())
    shown = screen.wait_screen("## Me")
    rows = shown.splitlines()
    if " tokens" in rows[0]:  # the context meter's winbar (emptied by the clear)
        rows = rows[1:]
    assert rows[0].endswith("│## Me")  # the top row of the chat window
    assert screen.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 3
    new_id = screen.lua("return vim.b.codecompanion_chat_id")
    assert new_id != old_id
    chats = tmp_path / "data" / "nvim" / "codecompanion" / "chats"
    saved = json.loads((chats / f"{old_id}.json").read_text())
    assert any("line 79" in (m.get("content") or "") for m in saved["messages"])
    # The cleared chat goes on under its new id.
    provider_server.enqueue(openai_text("fresh start"))
    screen.keys("G", "o", "again", "Escape", "Enter")
    screen.wait_screen("fresh start")
    new_file = chats / f"{new_id}.json"
    # The clear itself saves the new id (empty): wait for the save that holds the new turn.
    wait_for(lambda: new_file.exists() and "fresh start" in new_file.read_text())
    fresh = json.loads(new_file.read_text())
    assert [m["content"] for m in fresh["messages"] if m["role"] == "user"] == ["again"]
    assert "line 79" in (chats / f"{old_id}.json").read_text()
