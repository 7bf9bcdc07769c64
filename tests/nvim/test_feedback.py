"""Feedback on mistakes: a broken config file, wrong adapter names, setup() options, health."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.nvim import Editor, wait_for
from tests.support.tui import HAVE_TMUX, Tui

StartNvim = Callable[..., Editor]


def messages(ed: Editor) -> list[str]:
    out = ed.lua("return vim.api.nvim_exec2('messages', {output = true}).output")
    return [line for line in str(out).splitlines() if line.strip()]


@pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")
def test_broken_config_file_is_named_by_the_next_chat_in_one_line(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text("adapter = 'openai'\nadapters = {\n")
    screen = tui(config_file=config, width=250)
    screen.command("CodeCompanionChat")
    shown = screen.wait_screen("## Me", "using the offline demo")
    bottom = [row for row in shown.splitlines() if row.strip()][-1]
    # One line: the file and line, the error, and what is used instead.
    assert bottom.startswith("codecompanion: config file broken: ")
    assert "codecompanion.py:2: SyntaxError" in bottom and "using the offline demo" in bottom
    assert "Press ENTER" not in shown and "no provider configured" not in shown


def test_wrong_adapter_names_are_refused_in_one_line(start_nvim: StartNvim, tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text("adapter = 'openai_compat'\n")
    ed = start_nvim(config_file=config)
    ed.nvim.command("set columns=300")  # room for the whole line (narrower screens cut it)
    before = len(ed.nvim.api.list_bufs())
    ed.nvim.command("CodeCompanionChat adapter=anthropc")
    line = wait_for(lambda: [m for m in messages(ed) if "anthropc" in m])
    assert len(line) == 1 and "openai_compatible" in line[0] and "anthropic" in line[0]
    assert len(ed.nvim.api.list_bufs()) == before  # no chat was opened
    ed.nvim.command("CodeCompanionReload")
    reloaded = wait_for(lambda: [m for m in messages(ed) if "openai_compat'" in m])
    assert "codecompanion.py:1" in reloaded[0] and "does not exist" in reloaded[0]
    assert "anthropic" in reloaded[0]
    assert not [m for m in messages(ed) if "config reloaded" in m]


def test_setup_names_unknown_and_wrong_options_in_one_line(start_nvim: StartNvim) -> None:
    ed = start_nvim()
    ed.nvim.command("set columns=300")
    ed.lua(
        "require('codecompanion').setup({ yolo = 'yes', windw = {}, strategies = {},"
        " display = {}, window = { layout = 'sideways' }, keymaps = { sned = { n = 'x' } },"
        " host_nice = 2.5 })"
    )
    warned = wait_for(lambda: [m for m in messages(ed) if "setup()" in m])
    assert len(warned) == 1
    line = warned[0]
    assert '"windw"' in line and "yolo" in line and "boolean expected" in line
    assert "display, strategies are CodeCompanion.nvim options" in line
    assert 'unknown keymap "sned"' in line and "window.layout" in line
    assert "host_nice: a whole number from 0 to 19 expected, got 2.5" in line
    options = ed.lua("return require('codecompanion.config').options")
    assert options["yolo"] is False and options["window"]["layout"] == "vertical"
    assert options["host_nice"] == 3


def test_old_neovim_is_refused_in_one_line(start_nvim: StartNvim) -> None:
    ed = start_nvim()
    ed.lua(
        "local has = vim.fn.has; vim.fn.has = function(f)"
        " if f == 'nvim-0.10' then return 0 end return has(f) end;"
        "require('codecompanion').setup({}); vim.fn.has = has"
    )
    refused = [m for m in messages(ed) if "Neovim 0.10 or newer is needed" in m]
    assert len(refused) == 1


def test_checkhealth_says_a_missing_config_file_is_missing(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    ed = start_nvim(config_file=tmp_path / "nowhere.py")
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.nvim.current.buffer[:])
    assert f"no config file at {tmp_path / 'nowhere.py'}" in text
    assert "OK config file" not in text


def test_the_log_opens_at_its_newest_line(start_nvim: StartNvim, tmp_path: Path) -> None:
    ed = start_nvim()
    log = Path(str(ed.lua("return require('codecompanion.host').log_path()")))
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"old line {i}\n" for i in range(200)) + "the newest line\n")
    ed.nvim.command("CodeCompanionLog")
    assert ed.nvim.current.line == "the newest line"
