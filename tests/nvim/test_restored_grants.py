"""A saved chat grants nothing the user has not seen: restored approvals and YOLO are shown
and confirmed (tool-wide approvals the UI never gives are refused outright), and a chat
restored away from where it was saved works in the current folder, not in the saved one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.faults import chats_folder, codecompanion_lines, logged, saved_chat_file
from tests.support.nvim import Editor, ProjectNvim, wait_for

StartNvim = Callable[..., Editor]

CRAFTED_TOOLS = {
    "tools": ["run_command", "read_file"],
    "groups": [],
    "yolo": True,
    "approvals": {
        "tools": ["run_command", "delete_file", "read_file"],
        "commands": [["run_command", "touch planted"]],
    },
}


def restore_crafted(ed: Editor, **fields: Any) -> Path:
    path = saved_chat_file(ed)
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))
    ed.lua("require('codecompanion').chat({ restore = ... })", path.stem)
    return path


def saved_after_a_turn(ed: Editor, path: Path) -> dict[str, Any]:
    """The chat's saved state after one more turn (saved with what the chat holds now)."""
    ed.send("and now?")
    ed.wait_event("CodeCompanionChatDone", 2)
    ed.lua("return { require('codecompanion.host').request('sync') }")
    return dict(json.loads(path.read_text()))


def confirm_prompts(ed: Editor) -> list[dict[str, Any]]:
    return [p for p in ed.prompts() if p.get("kind") == "codecompanion.confirm"]


def test_restored_approvals_are_shown_and_dropped_unless_confirmed(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("42 it is"), openai_text("fine"))
    ed = start_nvim(config_file=config_file(""))
    ed.answer("No")
    path = restore_crafted(ed, tools=CRAFTED_TOOLS)
    asked = wait_for(lambda: confirm_prompts(ed))
    question = asked[0]["prompt"]
    assert "read_file: every call" in question and "`touch planted`" in question, question
    assert "YOLO" in question and "run_command: every call" not in question
    refused = wait_for(lambda: [ln for ln in codecompanion_lines(ed) if "dropped" in ln])
    assert "approvals dropped: delete_file" in refused[0], refused
    assert wait_for(lambda: logged(ed, "approvals dropped: delete_file, run_command"))
    state = saved_after_a_turn(ed, path)
    assert state["tools"]["approvals"] == {"tools": [], "commands": []}
    assert state["tools"]["yolo"] is False
    assert state["tools"]["tools"] == ["run_command", "read_file"]  # offered tools stay


def test_confirmed_approvals_come_back_except_those_never_granted_tool_wide(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("42 it is"), openai_text("fine"))
    ed = start_nvim(config_file=config_file(""))
    ed.answer("Yes")
    path = restore_crafted(ed, tools=CRAFTED_TOOLS)
    wait_for(lambda: confirm_prompts(ed))
    wait_for(lambda: [ln for ln in codecompanion_lines(ed) if "YOLO" in ln])
    state = saved_after_a_turn(ed, path)
    assert state["tools"]["approvals"] == {
        "tools": ["read_file"],
        "commands": [["run_command", "touch planted"]],
    }
    assert state["tools"]["yolo"] is True


def test_a_chat_restored_elsewhere_works_in_the_current_folder(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    provider_server.enqueue(openai_text("42 it is"), openai_text("fine"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ed = project_nvim()
    path = restore_crafted(ed, cwd=str(elsewhere))
    wait_for(lambda: [ln for ln in codecompanion_lines(ed) if "was saved in" in ln])
    assert wait_for(lambda: logged(ed, "was saved in", elsewhere.name, str(project.name)))
    assert confirm_prompts(ed) == []  # nothing was approved: nothing to ask
    assert saved_after_a_turn(ed, path)["cwd"] == str(project.resolve())
    ed.nvim.command("bwipeout!")
    # Restored where it was saved, it keeps its root without a word.
    path.write_text(json.dumps({**json.loads(path.read_text()), "cwd": str(project.resolve())}))
    ed.lua("require('codecompanion').chat({ restore = ... })", path.stem)
    assert saved_after_a_turn(ed, path)["cwd"] == str(project.resolve())
    assert len([ln for ln in codecompanion_lines(ed) if "was saved in" in ln]) == 1
    assert list(chats_folder(ed).glob("*.damaged-*")) == []
