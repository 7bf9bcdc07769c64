"""Builtins through the real ToolSystem (validation, approvals, time limits) and the CLI."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codecompanion.messages import ToolCall
from codecompanion.tools import tool_registry
from codecompanion.tools.builtin import BUILTIN_TOOLS, GROUPS
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import FakeEditor, RecordingChat, ScriptedApprover
from tests.support.tools import builtin_system


def _system(
    root: Path,
    approver: ScriptedApprover | None = None,
    *,
    editor: FakeEditor | None = None,
    yolo: bool = False,
    tool_opts: dict[str, dict[str, Any]] | None = None,
) -> tuple[ToolSystem, RecordingChat]:
    return builtin_system(
        root, "agent", approver=approver, tool_opts=tool_opts, editor=editor, yolo=yolo
    )


def test_registry_loads_every_builtin_and_group(project: Path) -> None:
    registry = tool_registry({}, {})
    assert registry.errors == []
    assert set(BUILTIN_TOOLS) <= set(registry.names())
    for name, group in GROUPS.items():
        loaded = registry.group(name)
        assert loaded is not None
        assert loaded.tools == list(group["tools"])
    system, _chat = _system(project)
    assert [s["function"]["name"] for s in system.schemas()] == list(BUILTIN_TOOLS)
    prompts = dict(system.system_prompts())
    assert (
        "autonomous" in prompts["<group>agent</group>"]
        or "on your own" in prompts["<group>agent</group>"]
    )


async def test_read_file_runs_without_approval(project: Path) -> None:
    (project / "a.txt").write_text("hello\n")
    approver = ScriptedApprover(default="reject")
    system, chat = _system(project, approver)
    args = {"filepath": "a.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    await system.run([ToolCall("c1", "read_file", args)])
    result = chat.result("c1")
    assert not result.is_error
    assert "hello" in result.for_llm
    assert approver.requests == []


async def test_edits_as_json_text_pass_validation(project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    system, chat = _system(project)
    edits = json.dumps([{"oldText": "x = 1", "newText": "x = 2", "replaceAll": None}])
    args = {"filepath": "a.py", "edits": edits, "explanation": "bump", "mode": None}
    await system.run([ToolCall("c1", "insert_edit_into_file", args)])
    assert not chat.result("c1").is_error, chat.result("c1").for_llm
    assert (project / "a.py").read_text() == "x = 2\n"


async def test_schema_violation_is_reported_before_running(project: Path) -> None:
    system, chat = _system(project)
    await system.run([ToolCall("c1", "read_file", {"filepath": "a.txt"})])
    result = chat.result("c1")
    assert result.is_error
    assert "start_line_number_base_zero" in result.for_llm


async def test_run_command_needs_approval_even_in_yolo(project: Path) -> None:
    approver = ScriptedApprover("reject")
    system, chat = _system(project, approver, yolo=True)
    await system.run([ToolCall("c1", "run_command", {"cmd": "touch made.txt"})])
    assert approver.prompts == ["Run the command `touch made.txt`? (unconfined)"]
    assert chat.result("c1").is_error
    assert not (project / "made.txt").exists()
    await system.run([ToolCall("c2", "run_command", {"cmd": "touch made.txt"})])
    assert not chat.result("c2").is_error
    assert (project / "made.txt").exists()


async def test_run_command_timeout_reports_output_so_far(project: Path) -> None:
    system, chat = _system(project, tool_opts={"run_command": {"timeout": 1000}})
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo early; sleep 30"})])
    result = chat.result("c1")
    assert result.is_error
    assert "timed out (limit 1s)" in result.for_llm
    assert "early" in result.for_llm


async def test_delete_file_asks_in_yolo_and_outside_path_asks_confirm(project: Path) -> None:
    (project / "gone.txt").write_text("x")
    approver = ScriptedApprover("approve")
    system, chat = _system(project, approver, yolo=True)
    await system.run([ToolCall("c1", "delete_file", {"filepath": "gone.txt"})])
    assert approver.prompts == ["Delete the file `gone.txt`?"]
    assert not (project / "gone.txt").exists()
    outside = project.parent / "out.txt"
    outside.write_text("o\n")
    args = {
        "filepath": str(outside),
        "start_line_number_base_zero": 0,
        "end_line_number_base_zero": -1,
    }
    await system.run([ToolCall("c2", "read_file", args)])
    assert chat.result("c2").is_error
    assert approver.questions == [f"Allow reading a file outside the project: {outside}?"]


async def test_approved_edit_skips_the_diff_review(project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    editor = FakeEditor(decisions=["reject"])
    system, chat = _system(project, editor=editor, yolo=True)
    args = {
        "filepath": "a.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 3", "replaceAll": False}],
        "explanation": "",
        "mode": None,
    }
    await system.run([ToolCall("c1", "insert_edit_into_file", args)])
    assert not chat.result("c1").is_error
    assert editor.reviews == []
    assert (project / "a.py").read_text() == "x = 3\n"


@pytest.mark.skipif(
    importlib.util.find_spec("codecompanion.cli.tool") is None, reason="no toolrun module"
)
def test_headless_cli_edits_a_file(project: Path) -> None:
    (project / "app.py").write_text("def main():\n    return 1\n")
    args = {
        "filepath": "app.py",
        "edits": [{"oldText": "return 1", "newText": "return 2", "replaceAll": None}],
        "explanation": "return two",
        "mode": None,
    }
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-m", "codecompanion", "tool", "insert_edit_into_file"]
        + ["--cwd", str(project), "--args", json.dumps(args), "--yes"],
        cwd=repo,
        env={
            "PYTHONPATH": str(repo / "rplugin" / "python3"),
            "PATH": "/usr/bin:/bin",
            "HOME": str(project),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    printed = json.loads(done.stdout)
    assert printed["status"] == "success"
    assert "Edited app.py on disk." in printed["for_llm"]
    assert (project / "app.py").read_text() == "def main():\n    return 2\n"
