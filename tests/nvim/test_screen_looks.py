"""Highlight groups, icons with a plain fallback, and the statusline function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor, wait_for
from tests.support.tui import HAVE_TMUX, Tui, write_config

StartNvim = Callable[..., Editor]
READ = {
    "filepath": "a.txt",
    "start_line_number_base_zero": 0,
    "end_line_number_base_zero": -1,
}


def test_every_group_is_a_default_link_and_survives_a_colorscheme(start_nvim: StartNvim) -> None:
    ed = start_nvim()
    links = ed.lua("return require('codecompanion.highlights').LINKS")
    assert {"CodeCompanionToolPending", "CodeCompanionToolSuccess", "CodeCompanionHeader"} <= set(
        links
    )
    for group, target in links.items():
        assert ed.lua("return vim.api.nvim_get_hl(0, {name = ...}).link", group) == target
    # A user's own colour wins (default = true), and :colorscheme brings the links back.
    ed.nvim.command("highlight CodeCompanionToolSuccess guifg=#ff0000")
    ed.nvim.command("colorscheme default")
    assert ed.lua("return vim.api.nvim_get_hl(0, {name = 'CodeCompanionToolError'}).link")
    help_text = (Path(__file__).parents[2] / "doc" / "codecompanion.txt").read_text()
    assert all(group in help_text for group in links)


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
@pytest.mark.parametrize(
    ("icons", "shown", "absent"),
    [(False, "[ok]", "✓"), (None, "✓", "[ok]"), (True, "\uf00c", "✓")],
)
def test_tool_status_icons_on_screen_with_a_plain_fallback(
    tui: Callable[..., Tui],
    tmp_path: Path,
    provider_server: LoopbackServer,
    icons: bool | None,
    shown: str,
    absent: str,
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    provider_server.enqueue(openai_tool_calls([("r1", "read_file", READ)]), openai_text("read it"))
    setup: dict[str, object] = {"window": {"layout": "buffer"}}
    if icons is not None:
        setup["icons"] = icons
    screen = tui(setup=setup, config_file=write_config(tmp_path, provider_server), cwd=tmp_path)
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "@{read_file} a.txt", "Escape", "Enter")
    text = screen.wait_screen("read it", shown)
    tool_row = next(
        row for row in text.splitlines() if "**read_file**" in row or "read_file" in row
    )
    assert absent not in text, tool_row
    if icons is not True:  # no Nerd Font glyph unless asked for
        assert not any(0xE000 <= ord(c) <= 0xF8FF or ord(c) >= 0xF0000 for c in text)
    groups = screen.lua(
        "local r = {} for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, 0, -1,"
        " {details = true})) do for _, c in ipairs(m[4].virt_text or {}) do"
        " table.insert(r, c[2]) end end return r"
    )
    assert "CodeCompanionToolSuccess" in groups and "CodeCompanionTokens" in groups


def test_status_says_what_the_chat_is_doing(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": "echo hi"})]),
        openai_text("done"),
        openai_tool_calls([("c2", "run_command", {"cmd": "sleep 3"})]),
        openai_text("slept"),
    )
    allow = "opts = {'tools': {'run_command': {'allow': ['sleep *']}}}\n"
    ed = start_nvim(config_file=config_file(allow))
    ed.open_chat()
    status_info = "return require('codecompanion').status_info() or {}"
    shown = wait_for(lambda: ed.lua(status_info).get("mode"))
    assert shown == "ask"  # the default mode, with what confines commands on this machine
    kind = wait_for(lambda: ed.lua(status_info).get("sandbox"))  # once the host has probed
    where = f"ask ({kind})"
    status = "return require('codecompanion').status()"
    wait_for(lambda: ed.lua(status) == f"{where} · openai · gpt-test")
    ed.send("@{run_command} say hi")
    asking = wait_for(
        lambda: (
            ed.lua("return require('codecompanion').status()").startswith("awaiting")
            and ed.lua("return require('codecompanion').status()")
        )
    )
    assert asking == f"awaiting approval · {where} · openai · gpt-test"
    ed.answer("approve")
    ed.wait_event("CodeCompanionChatDone")
    assert ed.lua("return require('codecompanion').status()") == f"{where} · openai · gpt-test"
    info = ed.lua("return require('codecompanion').status_info()")
    assert info["state"] == "" and info["running"] == 0
    ed.send("now sleep")
    wait_for(
        lambda: (
            ed.lua("return require('codecompanion').status()")
            == f"running 1 tool · {where} · openai · gpt-test"
        )
    )
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=15)
