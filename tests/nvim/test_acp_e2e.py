"""An agent chat on real Neovim with the scripted ACP agent (a real process on the SDK):
`:CodeCompanionChat adapter=<agent>`, streamed answers, the plan checklist rewritten in place,
a write reviewed hunk by hunk into checkpoints and the open buffer, permissions, cancel, and a
session loaded again after Neovim restarts."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.acp_chat import AGENT
from tests.support.nvim import Editor, wait_for


def agent_config(tmp_path: Path) -> Path:
    path = tmp_path / "codecompanion.py"
    state = tmp_path / "agent-state.json"
    path.write_text(
        f"acp = {{'scripted': {{'cmd': [{sys.executable!r}, '-I', {str(AGENT)!r}],"
        f" 'env': {{'SCRIPTED_STATE': {str(state)!r}}}}}}}\n"
    )
    return path


def start(start_nvim: Callable[..., Editor], tmp_path: Path, project: Path) -> Editor:
    return start_nvim(config_file=agent_config(tmp_path), cwd=project)


def open_agent_chat(ed: Editor) -> int:
    """`:CodeCompanionChat adapter=scripted` (opened once the agent's name is checked)."""
    before = ed.lua("return require('codecompanion').last_chat()")
    ed.nvim.command("CodeCompanionChat adapter=scripted")
    return int(wait_for(lambda: _new_chat(ed, before), 15))


def _new_chat(ed: Editor, before: object) -> int | None:
    bufnr = ed.lua("return require('codecompanion').last_chat()")
    return bufnr if bufnr and bufnr != before and ed.nvim.current.buffer.number == bufnr else None


def test_an_agent_chat_streams_plans_and_restores_its_session(
    start_nvim: Callable[..., Editor], tmp_path: Path, project: Path
) -> None:
    ed = start(start_nvim, tmp_path, project)
    chat = open_agent_chat(ed)
    ed.send("echo hi")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = ed.text(chat)
    assert "## scripted (small)" in text and "Hello: hi" in text
    commands = ed.lua("return vim.b[...].codecompanion_acp_commands", chat)
    assert commands[0]["name"] == "review"
    words = [i["word"] for i in ed.lua("return require('codecompanion.complete').items()")]
    assert "/review" in words  # the agent's commands complete after `/`
    ed.answer(2)  # gM: the agent's modes, pick "Plan"
    ed.nvim.input("gM")
    wait_for(lambda: ed.lua("return vim.b[...].codecompanion_acp_mode.current", chat) == "plan")
    ed.answer(1, 2)  # gC: the agent's options, "Model", then its second value, "Large"
    ed.nvim.input("gC")
    wait_for(lambda: "large" in ed.lua("return require('codecompanion.meter').get(...).text", chat))
    ed.send("kinds dir")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=30)
    lines = ed.lines(chat)
    assert "- [x] read" in lines and "- [x] write (!)" in lines
    assert "- [~] read" not in lines  # the checklist was rewritten, not drawn twice
    assert lines.count("**Plan**") == 1
    assert "mode Plan" in ed.lua("return require('codecompanion.meter').get(...).text", chat)
    chat_id = ed.lua("return require('codecompanion').chat_id(...)", chat)
    with contextlib.suppress(EOFError, OSError):
        ed.nvim.command("qa!")  # Neovim exits: the host closes the agent with it
    # A new Neovim: the saved chat is restored and its agent session loaded in a new agent.
    ed2 = start(start_nvim, tmp_path, project)
    restored = int(ed2.lua("return require('codecompanion').chat({ restore = ... })", chat_id))
    wait_for(lambda: "Hello: hi" in ed2.text(restored), 15)
    ed2.send("echo again")
    ed2.wait_event("CodeCompanionChatDone", timeout=30)
    text = ed2.text(restored)
    assert text.count("Hello: hi") == 1 and "Hello: again" in text
    saved = json_of(tmp_path, chat_id)
    assert saved["driver"] == {"agent": "scripted", "session_id": "s1"}


def json_of(tmp_path: Path, chat_id: str) -> dict:
    import json

    found = list(tmp_path.rglob(f"chats/{chat_id}.json"))
    assert found, "no saved chat"
    return dict(json.loads(found[0].read_text()))


def test_a_write_is_reviewed_hunk_by_hunk_checkpointed_and_one_undo_step(
    start_nvim: Callable[..., Editor], tmp_path: Path, project: Path
) -> None:
    source = project / "code.py"
    source.write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n")
    ed = start(start_nvim, tmp_path, project)
    ed.nvim.command(f"edit {source}")
    file_buf = ed.nvim.current.buffer.number
    chat = open_agent_chat(ed)
    # Two hunks: the first accepted, the second rejected.
    ed.answer("Review each hunk", "Accept", "Reject")
    ed.send(f"write {source} a = 10\\nb = 2\\nc = 3\\nd = 4\\ne = 5\\nf = 60\\n")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    assert source.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"
    assert ed.lines(file_buf)[0] == "a = 10"
    assert "accepted only part of the change" in ed.text(chat)
    changes = ed.lua("return require('codecompanion').changes()")
    assert [(c["path"], c["status"]) for c in changes] == [("code.py", "modified")]
    ed.nvim.command(f"buffer {file_buf}")
    ed.nvim.command("undo")
    assert ed.lines(file_buf)[0] == "a = 1"  # the agent's write was one undo step


def test_permissions_reject_one_call_and_the_turn_goes_on(
    start_nvim: Callable[..., Editor], tmp_path: Path, project: Path
) -> None:
    ed = start(start_nvim, tmp_path, project)
    open_agent_chat(ed)
    ed.answer("reject")
    ed.send("ask x")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    asked = [p for p in ed.prompts() if p["kind"] == "codecompanion.approval"]
    assert asked and asked[0]["items"] == ["approve", "always", "reject", "never"]
    assert "chosen: o-reject_once" in ed.text()
    done = ed.events()[-1]
    assert done["name"] == "CodeCompanionChatDone" and done["data"]["status"] == "success"


def test_q_cancels_the_agents_turn(
    start_nvim: Callable[..., Editor], tmp_path: Path, project: Path
) -> None:
    ed = start(start_nvim, tmp_path, project)
    chat = open_agent_chat(ed)
    ed.send("hang")
    wait_for(lambda: "waiting" in ed.text(chat), 30)
    ed.nvim.input("q")
    ed.wait_event("CodeCompanionChatStopped", timeout=15)
    assert "_[incomplete: stopped]_" in ed.text(chat)
    ed.send("echo after")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=30)
    assert "Hello: after" in ed.text(chat)


def test_resume_lists_the_agents_sessions_and_loads_the_one_picked(
    start_nvim: Callable[..., Editor], tmp_path: Path, project: Path
) -> None:
    ed = start(start_nvim, tmp_path, project)
    open_agent_chat(ed)
    ed.send("echo from the first chat")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    before = ed.lua("return require('codecompanion').last_chat()")
    ed.answer(1)
    ed.nvim.command("CodeCompanionChat Resume adapter=scripted")
    resumed = int(
        wait_for(
            lambda: (b := ed.lua("return require('codecompanion').last_chat()")) != before and b,
            30,
        )
    )
    pickers = [p for p in ed.prompts() if p["prompt"] == "Resume a scripted session"]
    assert pickers and "echo from the first chat" in pickers[0]["items"][0]
    wait_for(lambda: "Hello: from the first chat" in ed.text(resumed), 30)  # the replay, shown
    ed.send("echo resumed")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=30)
    assert "Hello: resumed" in ed.text(resumed)
