"""Processes that leave the command's process group (setsid, a double fork, a daemon) or run in
the background do not outlive the tool call: not when it ends, not when it is stopped, not when
the chat is closed or Neovim quits. Real shells and real processes, found in /proc by a unique
word in their command lines."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.e2e import approved_turn
from tests.support.fakes import RecordingChat
from tests.support.nvim import Editor, wait_for
from tests.support.proctable import Proc, processes, with_marker
from tests.support.shell_system import run_command_system

StartNvim = Callable[..., Editor]
ESCAPES = 5  # processes the command below leaves behind, each its own way


def escapees(marker: str) -> str:
    """A command line that leaves five processes carrying `marker` behind, each differently,
    then waits until each has started (each touches its file `up<n>`)."""
    daemon = (
        "import os, time\n"
        "if os.fork(): os._exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): os._exit(0)\n"
        "open('up5', 'w').close()\n"
        f"time.sleep(300)  # {marker}-daemon\n"
    )
    waits = " && ".join(f"[ -e up{n} ]" for n in range(1, ESCAPES + 1))
    return "\n".join(
        [
            f"setsid sh -c 'touch up1; sleep 300; echo {marker}-setsid' >/dev/null 2>&1 &",
            f"setsid -f sh -c 'touch up2; sleep 300; echo {marker}-setsid-fork' >/dev/null 2>&1",
            f"(sh -c 'touch up3; sleep 300; echo {marker}-double-fork' >/dev/null 2>&1 &) &",
            f"sh -c 'touch up4; sleep 300; echo {marker}-background' >/dev/null 2>&1 &",
            f'{sys.executable} -c "{daemon}" >/dev/null 2>&1',
            f"until {waits}; do sleep 0.05; done",
        ]
    )


def escaped(marker: str) -> list[Proc]:
    """The escaped processes (the command's own shell names all five, so it is left out)."""
    return [p for p in with_marker(marker) if p.cmdline.count(marker) == 1]


def wait_started(marker: str) -> list[Proc]:
    return wait_for(lambda: (found := escaped(marker)) and len(found) >= ESCAPES and found, 10)


def wait_gone(marker: str, timeout: float = 5.0) -> list[Proc]:
    """What is still alive after `timeout` seconds."""
    with contextlib.suppress(TimeoutError):
        wait_for(lambda: not escaped(marker), timeout)
    return escaped(marker)


def system(root: Path) -> tuple[ToolSystem, RecordingChat]:
    return run_command_system(root, {"allowed_in_yolo_mode": True})


async def test_nothing_outlives_a_finished_command(tmp_path: Path, marker: str) -> None:
    tools, chat = system(tmp_path)
    command = f"{escapees(marker)}\necho started"  # exits 0 once all five run
    await tools.run([ToolCall("f", "run_command", {"cmd": command})])
    assert "started" in chat.result("f").for_llm, chat.result("f").for_llm
    assert await asyncio.to_thread(wait_gone, marker) == []


async def test_nothing_outlives_a_stopped_command(tmp_path: Path, marker: str) -> None:
    tools, chat = system(tmp_path)
    command = f"{escapees(marker)}\nsleep 300"
    batch = asyncio.ensure_future(tools.run([ToolCall("s", "run_command", {"cmd": command})]))
    await asyncio.to_thread(wait_started, marker)
    tools.cancel()
    assert (await batch).statuses == {"s": "cancelled"}
    assert await asyncio.to_thread(wait_gone, marker) == []


def start_in_nvim(
    start_nvim: StartNvim, server: LoopbackServer, tmp_path: Path, marker: str
) -> tuple[Editor, int]:
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {{'url': '{server.url}/v1', 'api_key': 'sk-test',"
        " 'model': 'gpt-test'}}\n"
    )
    command = f"{escapees(marker)}\nsleep 300"
    server.enqueue(openai_tool_calls([("run1", "run_command", {"cmd": command})]), openai_text("x"))
    ed, bufnr = approved_turn(start_nvim, config, tmp_path / "project", "@{run_command} run it")
    wait_started(marker)
    return ed, bufnr


def test_nothing_outlives_closing_the_chat(
    start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path, marker: str
) -> None:
    ed, bufnr = start_in_nvim(start_nvim, provider_server, tmp_path, marker)
    ed.nvim.command(f"bwipeout! {bufnr}")
    assert wait_gone(marker) == []
    assert ed.lua("return require('codecompanion.host').status().running")


def test_nothing_outlives_quitting_neovim(
    start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path, marker: str
) -> None:
    ed, _bufnr = start_in_nvim(start_nvim, provider_server, tmp_path, marker)
    with contextlib.suppress(OSError, EOFError):
        ed.nvim.command("qa!")
    assert wait_gone(marker) == []


def test_the_marker_finds_processes_by_their_environment() -> None:
    assert processes()  # /proc is readable here, or none of the above could pass
