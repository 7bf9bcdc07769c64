"""A chat's controls (chat/controls.py) on a chat the workspace builds, with its real tool
system: mode and YOLO, forgetting approvals, adapter and model, a restored chat's approvals
given back only when the user says yes, the project root a restored chat keeps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from codecompanion.chat import controls
from codecompanion.chat.chat import Chat
from codecompanion.config import Config
from codecompanion.render_ops import SetVar
from codecompanion.tools.runtime.approval_policy import ApprovalMemory
from codecompanion.workspace import HostOptions, Workspace
from tests.support.chat import RecordingView, ScriptedAdapter
from tests.support.fakes import RecordingEvents, ScriptedApprover


def _workspace(tmp_path: Path) -> Workspace:
    config = Config(permissions={"sandbox": False}, opts={"checkpoints": {"enabled": False}})
    return Workspace(HostOptions(data_dir=str(tmp_path / "data")), env={}, config=config)


def _chat(
    tmp_path: Path, approver: ScriptedApprover | None = None
) -> tuple[Chat, RecordingView, Workspace]:
    workspace = _workspace(tmp_path)
    view = RecordingView()
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    chat = workspace.chat(
        "c1",
        ScriptedAdapter(),
        view,
        RecordingEvents(),
        approver=approver or ScriptedApprover(),
        cwd=project,
        project=project,
    )
    return chat, view, workspace


def _vars(view: RecordingView) -> dict[str, Any]:
    return {op.name: op.value for op in view.ops if isinstance(op, SetVar)}


def test_the_mode_cycles_and_an_unknown_one_is_one_line(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    assert chat.tools.mode == "ask"
    controls.switch_mode(chat, "next")
    assert chat.tools.mode == "edits"
    assert view.notices[-1] == (controls.mode_line(chat), "info")
    assert "file edits without asking" in view.notices[-1][0]
    assert _vars(view)["codecompanion_mode"] == "edits"
    controls.switch_mode(chat, "yolo")
    assert chat.tools.mode == "yolo" and view.notices[-1][1] == "warn"
    controls.switch_mode(chat, "next")  # round again to the first
    assert chat.tools.mode == "ask"
    controls.switch_mode(chat, "loose")
    assert chat.tools.mode == "ask"
    assert view.notices[-1] == ("unknown mode 'loose': use ask, edits, sandboxed, yolo", "error")


def test_yolo_toggles_and_forgetting_approvals_turns_it_off(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    controls.toggle_yolo(chat)
    assert chat.tools.yolo and view.notices[-1][1] == "warn"
    assert _vars(view)["codecompanion_yolo"] is True
    chat.tools.approvals.tools.add("read_file")
    chat.tools.approvals.commands.add(("run_command", "ls"))
    controls.forget_approvals(chat)
    assert not chat.tools.yolo and chat.tools.approvals.count() == 0
    assert view.notices[-1] == ("2 remembered approvals forgotten; YOLO mode off", "info")
    assert _vars(view)["codecompanion_yolo"] is False
    controls.toggle_yolo(chat)
    controls.toggle_yolo(chat)
    assert view.notices[-1] == ("YOLO mode off", "info")


def test_the_sandbox_variables_wait_for_the_probe_only_when_asked(tmp_path: Path) -> None:
    chat, _, _ = _chat(tmp_path)
    names = [op.name for op in controls.mode_vars(chat) if isinstance(op, SetVar)]
    assert names == [
        "codecompanion_mode",
        "codecompanion_yolo",
        "codecompanion_sandbox",
        "codecompanion_narrowed",
    ]
    assert controls.mode_line(chat).endswith("commands: " + chat.tools.sandbox.describe())  # type: ignore[union-attr]


async def test_adapter_and_model_change_only_while_the_chat_is_idle(tmp_path: Path) -> None:
    chat, view, workspace = _chat(tmp_path)
    other = ScriptedAdapter()
    other.name = "other"
    old = controls.switch_adapter(chat, other, "fell back")
    assert old is not None and old.name == "scripted" and chat.adapter is other
    assert ("fell back", "warn") in view.notices
    assert view.notices[-1][0] == "adapter: other · m1"
    controls.switch_model(chat, "m2")
    assert chat.model == "m2" and view.notices[-1][0] == "model: m2"

    gate = asyncio.Event()

    async def running() -> None:
        await gate.wait()

    chat._task = asyncio.get_running_loop().create_task(running())  # a turn under way
    assert chat.busy
    assert controls.switch_adapter(chat, ScriptedAdapter(), None) is None
    controls.switch_model(chat, "m3")
    assert chat.adapter is other and chat.model == "m2"
    assert view.notices[-1][0].startswith("a request is running: stop it (q)")
    gate.set()
    await chat._task


def _saved(tools: dict[str, Any]) -> dict[str, Any]:
    return {"title": "old talk", "updated": "2026-11-01 10:00", "tools": tools}


def test_a_restored_chat_gets_its_state_and_nothing_it_had_approved(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    approvals = {"tools": ["read_file", "run_command"], "commands": [["run_command", "ls"]]}
    remembered = controls.restore(
        chat, _saved({"tools": ["read_file"], "approvals": approvals, "yolo": True})
    )
    assert chat.title == "old talk" and chat.updated == "2026-11-01 10:00"
    assert "read_file" in chat.tools.offered
    # Nothing is granted by restoring: only grant (after a yes) gives it back.
    assert chat.tools.approvals.count() == 0 and not chat.tools.yolo
    assert remembered and remembered.yolo
    assert remembered.approvals.tools == {"read_file"}  # run_command is never tool-wide
    assert remembered.approvals.commands == {("run_command", "ls")}
    assert view.notices[-1] == ("saved tool-wide approvals dropped: run_command", "warn")


def test_a_saved_file_holding_junk_restores_nothing_to_ask_about(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    remembered = controls.restore(chat, {"title": 3, "tools": "all", "context": []})
    assert not remembered and chat.title is None and view.notices == []


async def test_restored_approvals_come_back_only_after_a_yes(tmp_path: Path) -> None:
    said_no = ScriptedApprover(confirms=(False,))
    chat, view, _ = _chat(tmp_path, said_no)
    approvals = {"tools": ["read_file"], "commands": [["run_command", "ls"]]}
    remembered = controls.restore(chat, _saved({"approvals": approvals, "yolo": True}))
    await controls.confirm_restored(chat, remembered, said_no)
    assert said_no.questions == [
        "Restore what this saved chat approved? read_file: every call; run_command: `ls`; "
        "YOLO mode (every call runs without a question)"
    ]
    assert chat.tools.approvals.count() == 0 and not chat.tools.yolo
    assert view.notices[-1] == ("the saved chat's approvals were not restored", "info")

    said_yes = ScriptedApprover(confirms=(True,))
    await controls.confirm_restored(chat, remembered, said_yes)
    assert chat.tools.approvals.tools == {"read_file"}
    assert chat.tools.approvals.commands == {("run_command", "ls")}
    assert chat.tools.yolo and _vars(view)["codecompanion_yolo"] is True


class BrokenApprover(ScriptedApprover):
    async def confirm(self, chat_id: str, question: str) -> bool:
        raise RuntimeError("Neovim went away")


async def test_a_question_that_fails_keeps_the_approvals_back(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    remembered = controls.Remembered(ApprovalMemory(tools={"read_file"}), yolo=False)
    await controls.confirm_restored(chat, remembered, BrokenApprover())
    assert chat.tools.approvals.count() == 0
    assert view.notices[-1] == ("the saved chat's approvals were not restored", "info")


def test_a_restored_chat_keeps_its_root_only_where_it_was_saved(tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    assert controls.kept_root(here, str(here), reattached=False) == here.resolve()
    assert controls.moved_root(here, str(here), reattached=False) is None
    # Restored in another folder: the current folder is the root, and one line says so.
    assert controls.kept_root(here, str(elsewhere), reattached=False) is None
    line = controls.moved_root(here, str(elsewhere), reattached=False)
    assert line is not None and line.startswith(f"this chat was saved in {elsewhere};")
    # Reattached after a host restart: the saved root stands wherever Neovim is.
    assert controls.kept_root(here, str(elsewhere), reattached=True) == elsewhere.resolve()
    for junk in (None, "", 7):
        assert controls.kept_root(here, junk, reattached=True) is None
        assert controls.moved_root(here, junk, reattached=False) is None


def test_stop_says_when_nothing_runs_unless_quiet(tmp_path: Path) -> None:
    chat, view, _ = _chat(tmp_path)
    controls.stop(chat, quiet=True)
    assert view.notices == []
    controls.stop(chat)
    assert view.notices == [("nothing is running", "info")]


def test_the_workspace_builds_the_chats_context_keeper_for_its_project(tmp_path: Path) -> None:
    chat, _, _ = _chat(tmp_path)
    assert chat.context.rules is not None
    assert chat.context.rules.root == (tmp_path / "project")
