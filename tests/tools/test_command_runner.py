"""One command runner for every tool: one reading of how a command ended, one environment."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codecompanion.tools import tool_registry
from tests.support.builder import built_tool_system
from tests.support.fakes import RecordingChat, RecordingEvents, ScriptedApprover
from tests.support.tools import call, command_tool


async def test_a_cmds_tool_and_a_builtin_that_run_out_of_time_both_end_as_timeout(
    tmp_path: Path,
) -> None:
    tools = {"runner": command_tool([["sh", "-c", "echo started; sleep 30"]], timeout=400)}
    registry = tool_registry(tools, {}, tool_opts={"run_command": {"timeout": 600}})
    chat = RecordingChat()
    system = built_tool_system(
        chat=chat,
        registry=registry,
        approver=ScriptedApprover(),
        events=RecordingEvents(),
        cwd=tmp_path,
        opts={"auto_submit": False},
    )
    assert system.add_tool("runner") and system.add_tool("run_command")
    table, native = call("runner"), call("run_command", {"cmd": "echo started; sleep 30"})
    outcome = await system.run([table, native])
    assert outcome.statuses == {table.id: "timeout", native.id: "timeout"}
    for made in (table, native):
        result = chat.result(made.id)
        assert "timed out" in result.for_llm and "started" in result.for_llm


async def test_the_runner_reads_every_ending_one_way(tmp_path: Path) -> None:
    system = built_tool_system(
        chat=RecordingChat(),
        registry=tool_registry({}, {}),
        approver=ScriptedApprover(),
        events=RecordingEvents(),
        cwd=tmp_path,
    )
    run = system.commands.run
    ok = await run([sys.executable, "-c", "print('hi')"], timeout=10)
    failed = await run([sys.executable, "-c", "raise SystemExit(3)"], timeout=10)
    slow = await run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.3)
    missing = await run(["no-such-program-xyz"], timeout=10)
    assert (ok.status, ok.stdout, ok.exit_code) == ("success", "hi\n", 0)
    assert (failed.status, failed.exit_code) == ("error", 3)
    assert (slow.status, slow.exit_code, slow.timed_out) == ("timeout", None, True)
    assert (missing.status, missing.started) == ("error", False)
    here = await run(["pwd"], timeout=10)
    assert here.stdout.strip() == str(tmp_path.resolve())


async def test_commands_get_the_chats_environment_without_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("CC_KEPT_FOR_TOOLS", "yes")
    system = built_tool_system(
        chat=RecordingChat(),
        registry=tool_registry({}, {}),
        approver=ScriptedApprover(),
        events=RecordingEvents(),
        cwd=tmp_path,
    )
    env = await system.commands.run(["env"], timeout=10)
    assert "CC_KEPT_FOR_TOOLS=yes" in env.stdout and "sk-secret" not in env.stdout
    given = await system.commands.run(["env"], timeout=10, env={"ONLY": "this"})
    assert "ONLY=this" in given.stdout and "CC_KEPT_FOR_TOOLS" not in given.stdout
