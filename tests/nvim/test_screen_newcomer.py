"""What a new user sees in the message area with the stock UI: one line, never "Press ENTER"
(demo chat at 80×24, a wrong adapter, an unknown tool and an HTTP error at 200 columns), and
a one-line hint for CodeCompanion.nvim's :CodeCompanion and :CodeCompanionActions."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text, openai_tool_calls
from tests.support.nvim import ROOT, nvim_env, wait_for
from tests.support.tui import HAVE_TMUX, Tui, write_config

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def last_line(screen: Tui) -> str:
    return screen.screen().rstrip("\n").splitlines()[-1]


def send_in_a_chat(
    tui: Callable[..., Tui],
    tmp_path: Path,
    server: LoopbackServer,
    message: str,
    extra: str = "",
    width: int = 100,
) -> Tui:
    """A chat filling the window, in `tmp_path` with the loopback config plus `extra`, and
    `message` typed and sent."""
    screen = tui(
        width=width,
        setup={"window": {"layout": "buffer"}},
        config_file=write_config(tmp_path, server, extra),
        cwd=tmp_path,
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", message, "Escape", "Enter")
    return screen


def messages(screen: Tui) -> str:
    """The message history, as :messages shows it."""
    return str(screen.lua("return vim.api.nvim_exec2('messages', {output = true}).output"))


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_demo_chat_and_a_wrong_adapter_take_one_line_and_keep_their_whole_text(
    tui: Callable[..., Tui], tmp_path: Path, size: tuple[int, int]
) -> None:
    screen = tui(width=size[0], height=size[1])
    screen.command("CodeCompanionChat")
    shown = screen.wait_screen("## Me", "codecompanion: offline demo")
    assert "Press ENTER" not in shown
    assert last_line(screen).startswith("codecompanion: offline demo: no provider")
    screen.command("CodeCompanionChat adapter=nope")
    shown = screen.wait_screen('no adapter "nope"')
    assert "Press ENTER" not in shown
    # One line drawn, cut (the list is longer than the message area even at 200 columns).
    assert last_line(screen).endswith("…")
    # :messages and the log hold every notice whole.
    whole = 'no adapter "nope": valid names are anthropic, azure_openai, copilot,'
    assert whole in messages(screen) and "openrouter, xai" in messages(screen)
    assert "or name an adapter in codecompanion.py)" in messages(screen)
    log = (tmp_path / "state" / "nvim" / "codecompanion.log").read_text()
    assert whole in log and "openrouter, xai" in log
    assert "or name an adapter in codecompanion.py)" in log
    screen.command("CodeCompanion explain this")
    shown = screen.wait_screen(":CodeCompanionChat [prompt] opens a chat")
    assert "E464" not in shown and "E492" not in shown and "Press ENTER" not in shown
    screen.command("CodeCompanionActions")
    shown = screen.wait_screen(":CodeCompanionChat Toggle|Restore|Add")
    assert "E492" not in shown and "Press ENTER" not in shown
    assert "(there is no action palette)" in messages(screen)


@pytest.mark.parametrize("size", [(80, 24), (40, 24), (200, 50)])
def test_make_runs_welcome_line_fits_without_a_prompt(
    tui: Callable[..., Tui], tmp_path: Path, size: tuple[int, int]
) -> None:
    screen = tui(width=size[0], height=size[1], init=ROOT / "scripts" / "run_init.lua")
    shown = screen.wait_screen("codecompanion: :CodeCompan")
    assert "Press ENTER" not in shown
    assert screen.lua("return vim.o.columns") == size[0]  # Neovim answers: no prompt waits


def test_a_notice_on_a_narrow_terminal_is_cut_to_the_room_left_beside_ruler_and_showcmd(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    screen = tui(width=30, cwd=tmp_path)
    screen.command("CodeCompanionChat")
    shown = screen.wait_screen("## Me", "codecompanion")
    assert "Press ENTER" not in shown
    assert last_line(screen).startswith("codeco") and "…" in last_line(screen)
    assert screen.lua("return vim.o.columns") == 30  # Neovim still answers: no prompt waits


def test_unknown_tool_and_http_error_take_one_line_at_200_columns(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    long_reason = "the upstream model is overloaded; " * 12
    provider_server.enqueue(openai_text("fine"), Turn.error(400, long_reason))
    screen = send_in_a_chat(tui, tmp_path, provider_server, "use @{no_such_tool} please", width=200)
    shown = screen.wait_screen("fine")
    assert "Press ENTER" not in shown
    wait_for(lambda: "unknown tool @{no_such_tool}" in messages(screen))
    screen.keys("G", "o", "again", "Escape", "Enter")
    shown = screen.wait_screen("HTTP 400")
    assert "Press ENTER" not in shown
    # Drawn on one line, cut; whole in :messages (the provider's reason as the adapter keeps it).
    drawn = wait_for(lambda: "(HTTP 400)" in messages(screen) and last_line(screen))
    assert drawn.startswith("codecompanion: ") and drawn.endswith("…") and len(drawn) <= 200

    def notice() -> list[str]:
        return [line for line in messages(screen).splitlines() if "(HTTP 400)" in line]

    assert all(len(line) > 200 for line in wait_for(notice))


def test_qa_typed_at_the_stock_approval_prompt_quits_quietly(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    calls = [("c1", "run_command", {"cmd": "echo one"}), ("c2", "run_command", {"cmd": "echo 2"})]
    provider_server.enqueue(openai_tool_calls(calls, text="Two commands."), openai_text("done"))
    screen = send_in_a_chat(tui, tmp_path, provider_server, "@{run_command} go")
    screen.wait_screen("Run the command `echo one`?", "Type number")
    screen.keys(":qa", "Enter")  # an Ex command, not a choice: Neovim quits

    def gone() -> bool:
        try:
            return "nvim" not in screen.tmux("list-panes", "-F", "#{pane_current_command}")
        except subprocess.CalledProcessError:
            return True  # the session ended with Neovim

    wait_for(gone, timeout=15)
    log = tmp_path / "state" / "nvim" / "codecompanion.log"
    text = log.read_text() if log.exists() else ""
    assert "Traceback" not in text and " ERROR " not in text, text[-2000:]
    assert "host exited" not in text and "host stopped" in text


def test_quit_with_a_tool_and_an_mcp_server_running_leaves_a_clean_log(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    launch = "import sys, mcp_server_time; sys.argv = ['mcp-server-time']; mcp_server_time.main()"
    servers = {"time": {"cmd": [sys.executable, "-c", launch]}}
    extra = (
        "opts = {'tools': {'run_command': {'allow': ['sleep *']}}}\n"
        f"mcp = {{'servers': {json.dumps(servers)}}}\n"
    )
    provider_server.enqueue(openai_tool_calls([("s1", "run_command", {"cmd": "sleep 30"})]))
    screen = send_in_a_chat(
        tui, tmp_path, provider_server, "@{run_command} @{mcp:time} wait", extra
    )
    screen.wait_screen("sleep 30")
    wait_for(lambda: screen.lua("return require('codecompanion').status()").startswith("running"))
    screen.command("qa!")

    def gone() -> bool:
        try:
            return "nvim" not in screen.tmux("list-panes", "-F", "#{pane_current_command}")
        except subprocess.CalledProcessError:
            return True

    wait_for(gone, timeout=15)
    text = (tmp_path / "state" / "nvim" / "codecompanion.log").read_text()
    assert "Traceback" not in text and " ERROR " not in text and "host exited" not in text, text


def test_completion_opens_as_you_type_at_hash_at_and_slash(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    screen = tui(setup={"window": {"layout": "buffer"}}, cwd=tmp_path)
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me", "Offline demo")
    screen.keys("G", "o", "see #se")
    shown = screen.wait_screen("#{selection}", "The last visual selection")
    assert "#{buffer}" not in shown  # narrowed to what matches what was typed
    screen.keys("Escape")
    screen.keys("o", "use @{rea")
    screen.wait_screen("@{read_file}")
    screen.keys("Escape")
    screen.keys("o", "/no")
    screen.wait_screen("/now", "Insert the current date and time")
    screen.keys("C-n", "C-y", "Escape")
    line = wait_for(lambda: screen.lua("return vim.api.nvim_get_current_line()") or None)
    assert line[:3] in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), line


def test_chat_window_gets_its_width_back_after_the_terminal_shrinks_and_grows(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    screen = tui(width=120, cwd=tmp_path)  # default layout: vertical, 0.45 of the columns
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    width = "return vim.api.nvim_win_get_width(0)"
    assert screen.lua(width) == 54
    screen.tmux("resize-window", "-t", screen.session, "-x", "30", "-y", "30")
    wait_for(lambda: screen.lua("return vim.o.columns") == 30)
    assert screen.lua(width) > 1  # not squeezed to one column
    screen.tmux("resize-window", "-t", screen.session, "-x", "120", "-y", "30")
    wait_for(lambda: screen.lua("return vim.o.columns") == 120)
    wait_for(lambda: screen.lua(width) == 54)


def test_each_parallel_result_is_under_its_own_call(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\nbeta\n")
    whole = {"start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    calls = [
        ("r1", "read_file", {"filepath": "a.txt", **whole}),
        ("r2", "read_file", {"filepath": "b.txt", **whole}),
        ("r3", "read_file", {"filepath": "missing.txt", **whole}),
    ]
    provider_server.enqueue(openai_tool_calls(calls, text="Three reads."), openai_text("Read."))
    screen = tui(
        width=60,
        setup={"window": {"layout": "buffer"}, "icons": False},
        config_file=write_config(tmp_path, provider_server),
        cwd=tmp_path,
    )
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "@{read_file} three", "Escape", "Enter")
    shown = screen.wait_screen("Read.")
    rows = shown.splitlines()

    def row(text: str) -> int:
        return next(i for i, line in enumerate(rows) if text in line)

    a, b, missing = row("a.txt"), row("b.txt"), row("missing.txt")
    assert a < b < missing
    assert a < row("Read `a.txt`") < b  # each result line under its own call
    assert b < row("Read `b.txt`") < missing
    # At 60 columns the folded output still shows its status and size (the title gives way).
    assert "[success] (4 lines)" in shown and "[success] (5 lines)" in shown
    # gO opens the full output of the call under the cursor; q closes that window.
    screen.lua("vim.fn.search('filepath=a.txt', 'w') return true")
    screen.keys("g", "O")
    wait_for(lambda: len(screen.lua("return vim.api.nvim_list_wins()")) == 2)
    assert "tool-output" in screen.lua("return vim.api.nvim_buf_get_name(0)")
    screen.keys("q")
    wait_for(lambda: len(screen.lua("return vim.api.nvim_list_wins()")) == 1)


def test_text_streamed_before_a_call_is_on_screen_when_the_stock_prompt_asks(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    said = "Before running it: this command only prints a word."
    calls = [("c1", "run_command", {"cmd": "echo hi"})]
    provider_server.enqueue(openai_tool_calls(calls, text=said), openai_text("done"))
    screen = send_in_a_chat(tui, tmp_path, provider_server, "@{run_command} go")
    # The first screen that shows the question already shows the text before the call.
    shown = screen.wait_screen("Type number", timeout=20)
    assert said in shown
    screen.keys("1", "Enter")
    screen.wait_screen("done")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("variable", ["DIR", "PROJECT"])
def test_make_run_starts_neovim_in_the_folder_given(tmp_path: Path, variable: str) -> None:
    project = tmp_path / "my project"
    project.mkdir()
    screen = Tui(tmp_path, 100, 30)
    env = nvim_env(tmp_path, {})
    env["HOME"] = str(tmp_path / "home")  # an empty HOME, as a newcomer's
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    run = f"make -s run {variable}={shlex.quote(str(project))}"
    command = f"cd {shlex.quote(str(ROOT))} && env {exports} {run}"
    screen.tmux("new-session", "-d", "-s", screen.session, "-x", "100", "-y", "30", command)
    try:
        screen.wait_screen(":CodeCompanionChat to start", timeout=60)
        screen.command("echo 'cwd=' .. getcwd()")
        screen.wait_screen(f"cwd={project}")
    finally:
        screen.close()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_everyday_notices_take_one_line_and_are_whole_in_the_history(
    tui: Callable[..., Tui], tmp_path: Path, size: tuple[int, int]
) -> None:
    screen = tui(width=size[0], height=size[1], setup={"window": {"layout": "buffer"}})
    screen.command("CodeCompanionChat")
    screen.wait_screen("## Me", "Offline demo")

    def said(action: Callable[[], None], whole: str) -> None:
        action()
        try:
            wait_for(lambda: whole in messages(screen), timeout=15)
        except TimeoutError:
            raise AssertionError(messages(screen) + screen.screen()) from None
        shown = screen.screen()
        assert "Press ENTER" not in shown, shown
        assert len(last_line(screen)) <= size[0]
        assert screen.lua("return vim.o.columns") == size[0]  # nothing waits on a prompt

    wait_for(lambda: screen.lua("return require('codecompanion').mode()") == "ask")
    said(lambda: screen.keys("gtm"), "mode edits: ")
    said(
        lambda: screen.keys("G", "o", "/symbols no/such/file.py", "Escape", "Enter"),
        "/symbols: no readable file no/such/file.py",
    )
    said(
        lambda: screen.keys("G", "o", "/fetch http://127.0.0.1:9/nothing-here", "Escape", "Enter"),
        "/fetch: Could not fetch http://127.0.0.1:9/nothing-here: ",
    )
    said(
        lambda: screen.command("CodeCompanionChat adapter=nosuch"),
        "openai_responses, openrouter, xai",
    )
    said(lambda: screen.keys("G", "o", "/compact", "Escape", "Enter"), "nothing to compact")


def test_notices_that_come_together_are_all_in_the_history_and_one_is_drawn(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    screen = tui(width=80, height=24)
    screen.command(
        "lua local n = require('codecompanion.notify') n.notify('the first, an info ' .. "
        "string.rep('x', 90)) n.notify('the second, a warning') n.notify('a warning')"
    )
    wait_for(lambda: "the second, a warning" in last_line(screen))
    shown = screen.screen()
    assert "Press ENTER" not in shown and "the first" not in shown
    history = messages(screen)
    assert "codecompanion: the first, an info " + "x" * 90 in history
    assert "codecompanion: the second, a warning" in history
    assert "codecompanion: a warning\n" not in history + "\n"  # said by the longer one
