"""Command cmds: argv lists with ${name} from env, run in the project root, never a shell string."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.fakes import ScriptedApprover
from tests.support.tools import call, command_tool, make


async def test_placeholders_come_from_env_and_commands_run_in_order(tmp_path: Path) -> None:
    def env(self: Any) -> dict[str, Any]:
        return {"lang": self.args["lang"], "file": "out.txt"}

    cmds = [
        ["sh", "-c", 'printf \'%s\' "$1" > "$2"', "sh", "${lang}", "${file}"],
        ["cat", "${file}"],
    ]
    h = make({"runner": command_tool(cmds, env)}, cwd=tmp_path)
    c = call("runner", {"lang": "python; rm -rf /"})
    await h.run(c)
    assert (tmp_path / "out.txt").read_text() == "python; rm -rf /"  # one argv item, not a shell
    assert h.chat.result(c.id).for_llm == "python; rm -rf /"


async def test_a_failing_command_reports_exit_code_stderr_and_stops() -> None:
    cmds = [["sh", "-c", "echo partial; echo broken >&2; exit 3"], ["echo", "never"]]
    h = make({"runner": command_tool(cmds)})
    c = call("runner")
    await h.run(c)
    result = h.chat.result(c.id)
    assert result.is_error and "exit code 3" in result.for_llm
    assert (
        "broken" in result.for_llm and "partial" in result.for_llm and "never" not in result.for_llm
    )


async def test_success_output_gets_stdout_of_each_command() -> None:
    seen: list[list[Any]] = []
    spec = command_tool([["echo", "one"], ["echo", "two"]])
    spec["output"] = {"success": lambda self, tools, cmd, stdout: seen.append(list(stdout))}
    h = make({"runner": spec})
    c = call("runner")
    await h.run(c)
    assert seen == [[["one"]], [["one"], ["two"]]]  # a list of lines per command
    assert h.chat.result(c.id).for_llm == "one\ntwo"  # no output added: the default has the data


async def test_command_timeout_kills_it_and_keeps_the_output_so_far() -> None:
    spec = command_tool([["sh", "-c", "echo started; sleep 30"]], timeout=300)
    h = make({"runner": spec})
    c = call("runner")
    await h.run(c)
    result = h.chat.result(c.id)
    assert h.chat.final_status(c.id) == "timeout"
    assert "timed out" in result.for_llm and "started" in result.for_llm


async def test_cancel_while_a_command_runs_kills_it_and_answers_every_call(tmp_path: Path) -> None:
    marker = tmp_path / "alive"
    spec = command_tool([["sh", "-c", f"touch {marker}; sleep 30; rm {marker}"]])
    h = make({"runner": spec}, approver=ScriptedApprover())
    first, second = call("runner"), call("runner")
    batch = asyncio.ensure_future(h.run(first, second))
    while not marker.exists():
        await asyncio.sleep(0.01)
    h.system.cancel()
    outcome = await batch
    assert outcome.status == "cancelled" and not outcome.auto_submit
    assert [h.chat.final_status(c.id) for c in (first, second)] == ["cancelled", "cancelled"]
    assert len(h.chat.results) == 2
    assert marker.exists()  # the command never reached its `rm`: it was killed
