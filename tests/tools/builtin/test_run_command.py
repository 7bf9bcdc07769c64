"""run_command: shell, cwd, exit codes, timeout and cancel kill everything, output caps, stdin."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from codecompanion.tools.builtin import run_command
from tests.support.builtin import FakeTools, prompt, run_tool
from tests.support.proctable import members, read_pgid, wait_for_file


async def test_runs_through_the_shell_in_the_project_root(tools: FakeTools, project: Path) -> None:
    out = await run_tool(run_command, {"cmd": "pwd && echo hi | tr a-z A-Z"}, tools)
    assert out.status == "success"
    assert "$ pwd && echo hi | tr a-z A-Z\nstatus: exit code 0\n" in out.for_llm
    assert "\nsandbox: unconfined\nstdin: closed" in out.for_llm  # no sandbox in this fake
    assert f"{project}\nHI\n" in out.for_llm
    assert "stderr: (empty)" in out.for_llm
    assert out.for_user == "Ran `pwd && echo hi | tr a-z A-Z` (exit 0)"


async def test_failure_reports_exit_code_and_both_streams(tools: FakeTools) -> None:
    out = await run_tool(run_command, {"cmd": "echo out; echo bad >&2; exit 4"}, tools)
    assert out.status == "error"
    assert "status: exit code 4" in out.for_llm
    assert "stdout:\n```\nout\n```" in out.for_llm
    assert "stderr:\n```\nbad\n```" in out.for_llm
    assert out.for_user == "`echo out; echo bad >&2; exit 4` failed (exit code 4; unconfined)"


async def test_command_waiting_for_input_gets_eof_and_a_note(tools: FakeTools) -> None:
    cmd = "printf 'Continue? [y/N] '; read answer || exit 1"
    out = await run_tool(run_command, {"cmd": cmd}, tools)
    assert out.status == "error"
    assert "stdin is closed (no input can be given)" in out.for_llm


async def test_timeout_kills_the_whole_group(tools: FakeTools, project: Path) -> None:
    cmd = f"echo $$ > {project}/pgid; echo started; sleep 30 & sleep 30"
    out = await run_tool(run_command, {"cmd": cmd}, tools, opts={"timeout": 500})
    assert out.status == "timeout"
    assert "timed out (limit 0.5s)" in out.for_llm
    assert "started" in out.for_llm
    assert out.for_user is not None and "timed out" in out.for_user
    assert members({read_pgid(project)}) == []


async def test_cancel_kills_the_whole_group(tools: FakeTools, project: Path) -> None:
    cmd = f"echo $$ > {project}/pgid; sleep 30 & sleep 30"
    task = asyncio.create_task(run_tool(run_command, {"cmd": cmd}, tools))
    await wait_for_file(project / "pgid")
    pgid = read_pgid(project)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert members({pgid}) == []


async def test_output_is_capped(tools: FakeTools) -> None:
    cmd = "i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done"
    out = await run_tool(run_command, {"cmd": cmd}, tools, opts={"max_chars": 2000})
    assert out.status == "success"
    assert "line0\n" in out.for_llm
    assert "line2999\n" in out.for_llm
    assert "characters cut" in out.for_llm
    assert len(out.for_llm) < 3000


async def test_empty_or_missing_cmd(tools: FakeTools) -> None:
    out = await run_tool(run_command, {"cmd": "  "}, tools)
    assert "`cmd` is empty" in out.for_llm
    out = await run_tool(run_command, {}, tools)
    assert "`cmd` must be a string" in out.for_llm


async def test_environment_is_inherited(tools: FakeTools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC_RUN_COMMAND_TEST", "visible")
    out = await run_tool(run_command, {"cmd": "echo $CC_RUN_COMMAND_TEST"}, tools)
    assert "visible" in out.for_llm


def test_approval_options_and_prompt(tools: FakeTools) -> None:
    opts = run_command.TOOL.opts
    assert (opts["requires_approval"], opts["allowed_in_yolo_mode"], opts["timeout"]) == (
        True,
        False,
        300_000,
    )
    args = {"cmd": "make test"}
    assert prompt(run_command, args, tools) == "Run the command `make test`? (unconfined)"
    assert opts["command_arg"] == "cmd"
    assert os.environ.get("CC_RUN_COMMAND_TEST") is None
