"""The checks after a tool round, through the real tool system and edit tool: a failing check
becomes one message after the round's results; a passing one, or an unedited round, none."""

from __future__ import annotations

import sys
from pathlib import Path

from codecompanion.after_edit.runs import ProjectChecks
from codecompanion.after_edit.trust import TrustStore
from codecompanion.messages import ToolCall
from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import FakeEditor, RecordingChat, RecordingEvents, ScriptedApprover

CHECK = f"{sys.executable} -m pyflakes {{files}}"


def system(root: Path, approver: ScriptedApprover) -> tuple[ToolSystem, RecordingChat]:
    chat = RecordingChat()
    checks = ProjectChecks(root, {"*.py": [CHECK]}, TrustStore(root.parent / "trust.json"))
    tools = ToolSystem(
        chat=chat,
        registry=tool_registry({}, {}),
        approver=approver,
        events=RecordingEvents(),
        cwd=root,
        editor=FakeEditor(),
        opts={"auto_submit": False},
        mode="edits",
        checks=lambda: checks,
    )
    tools.add_tool("insert_edit_into_file")
    tools.add_tool("read_file")
    return tools, chat


def edit(new: str, call_id: str = "e1") -> ToolCall:
    args = {
        "filepath": "app.py",
        "edits": [{"oldText": "x = 1", "newText": new, "replaceAll": False}],
        "explanation": None,
        "mode": None,
    }
    return ToolCall(call_id, "insert_edit_into_file", args)


async def test_a_failing_check_joins_the_history_after_the_results(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    approver = ScriptedApprover(confirms=(True,))
    tools, chat = system(root, approver)
    await tools.run([edit("x = undefined_y")])
    assert (
        len(approver.questions) == 1
        and "pyflakes {files} for *.py (config)" in (approver.questions[0])
    )
    [(role, text, shown)] = chat.messages
    assert role == "user" and shown
    assert "The project's checks failed after your edits" in text
    assert "-m pyflakes app.py" in text and "undefined name 'undefined_y'" in text
    chat.messages.clear()
    (root / "app.py").write_text("x = 1\n")
    await tools.run([edit("x = 2", "e2")])
    assert chat.messages == [] and len(approver.questions) == 1  # passed; asked only once


async def test_a_round_that_edits_nothing_runs_no_check(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = undefined\n")
    approver = ScriptedApprover(confirms=(True,))
    tools, chat = system(root, approver)
    read = ToolCall("r1", "read_file", {"filepath": "app.py"})
    await tools.run([read])
    assert approver.questions == [] and chat.messages == []
