"""No tool process outlives a cancel, a timeout, closing the chat or quitting Neovim: the
process table is scanned for a unique marker, grandchildren started by the shell included."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.e2e import approved_turn
from tests.support.fakes import RecordingChat
from tests.support.nvim import Editor, wait_for
from tests.support.proctable import members, wait_until_gone, with_marker
from tests.support.shell_system import run_command_system

StartNvim = Callable[..., Editor]


def family(marker: str, ignore_term: bool = False) -> str:
    """A shell that starts two background grandchildren and waits, its line carrying `marker`."""
    trap = "trap '' TERM; " if ignore_term else ""
    return f"{trap}sleep 300 & sleep 301 & wait; echo {marker}"


def started(marker: str) -> set[int]:
    """The process groups of the marked shell, once it and both sleeps run."""
    groups = {p.pgid for p in wait_for(lambda: with_marker(marker))}
    wait_for(lambda: len(members(groups)) >= 3)
    return groups


def system(tmp_path: Path, timeout: float = 30_000) -> tuple[ToolSystem, RecordingChat]:
    return run_command_system(tmp_path, {"allowed_in_yolo_mode": True, "timeout": timeout})


@pytest.mark.parametrize("ignore_term", [False, True])
async def test_cancel_kills_the_command_and_its_grandchildren(
    tmp_path: Path, marker: str, ignore_term: bool
) -> None:
    tools, chat = system(tmp_path)
    batch = asyncio.ensure_future(
        tools.run([ToolCall("c", "run_command", {"cmd": family(marker, ignore_term)})])
    )
    groups = await asyncio.to_thread(started, marker)
    tools.cancel()
    outcome = await batch
    assert outcome.statuses == {"c": "cancelled"}
    assert await asyncio.to_thread(wait_until_gone, groups, 3) == []


async def test_timeout_kills_the_command_and_its_grandchildren(tmp_path: Path, marker: str) -> None:
    tools, chat = system(tmp_path, timeout=800)
    batch = asyncio.ensure_future(
        tools.run([ToolCall("t", "run_command", {"cmd": family(marker)})])
    )
    groups = await asyncio.to_thread(started, marker)
    outcome = await batch
    assert outcome.statuses == {"t": "timeout"}
    assert "timed out" in chat.result("t").for_llm
    assert await asyncio.to_thread(wait_until_gone, groups, 3) == []


def run_in_nvim(
    start_nvim: StartNvim, config: Path, server: LoopbackServer, tmp_path: Path, command: str
) -> tuple[Editor, int]:
    server.enqueue(
        openai_tool_calls([("run1", "run_command", {"cmd": command})]), openai_text("done")
    )
    return approved_turn(start_nvim, config, tmp_path / "project", "@{run_command} run it")


def test_closing_the_chat_kills_the_command_and_its_grandchildren(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
    marker: str,
) -> None:
    ed, bufnr = run_in_nvim(start_nvim, config_file(""), provider_server, tmp_path, family(marker))
    groups = started(marker)
    ed.nvim.command(f"bwipeout! {bufnr}")
    assert wait_until_gone(groups, 5) == []
    assert ed.lua("return require('codecompanion.host').status().running")


@pytest.mark.parametrize("ignore_term", [False, True])
def test_quitting_neovim_kills_the_command_and_its_grandchildren(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
    marker: str,
    ignore_term: bool,
) -> None:
    command = family(marker, ignore_term)
    ed, _ = run_in_nvim(start_nvim, config_file(""), provider_server, tmp_path, command)
    groups = started(marker)
    with contextlib.suppress(OSError, EOFError):
        ed.nvim.command("qa!")
    assert wait_until_gone(groups, 5) == []


async def test_a_key_command_that_hangs_is_killed_with_its_children(
    marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecompanion.adapters import keys
    from codecompanion.errors import AuthenticationError

    monkeypatch.setattr(keys, "CMD_TIMEOUT", 0.5)
    resolving = asyncio.ensure_future(keys.KeyResolver().resolve(f"cmd:{family(marker)}"))
    groups = await asyncio.to_thread(started, marker)
    with pytest.raises(AuthenticationError, match="timed out"):
        await resolving
    assert await asyncio.to_thread(wait_until_gone, groups, 3) == []
