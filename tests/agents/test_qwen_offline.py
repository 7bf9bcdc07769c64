"""Qwen Code (npm `@qwen-code/qwen-code`) through real Neovim, against a scripted
OpenAI-compatible server on 127.0.0.1, in a network namespace with only loopback: a streamed
answer, a read that sees unsaved buffer text, a write reviewed hunk by hunk (in `changes()`,
rewound, one undo step), its commands asked through our question (Qwen Code runs them itself:
it sends no `terminal/*`), each option kind it offers, a mode picked with gM, a cancel mid-turn
and a session loaded after a restart."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.agent_tier import ROOT, approval_items, open_agent, tool_results, why_not
from tests.support.nvim import Editor, wait_for

QWEN = Path(
    os.environ.get("CODECOMPANION_QWEN") or ROOT / ".venv-agents/qwen/node_modules/.bin/qwen"
)

pytestmark = pytest.mark.skipif(
    why_not(dict(os.environ), QWEN, "Qwen Code") is not None,
    reason=why_not(dict(os.environ), QWEN, "Qwen Code") or "",
)

Start = Callable[..., Editor]


def qwen_config(tmp_path: Path, server: LoopbackServer) -> Path:
    """Qwen Code's own HOME (its settings: usage statistics, telemetry and update checks off),
    the OpenAI-compatible provider in its environment, and our config naming it with the
    preset's command."""
    home = tmp_path / "qwen-home"
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    settings = {
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }  # the provider comes from the OPENAI_ variables alone
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    env = {
        "HOME": str(home),
        "OPENAI_API_KEY": "sk-loopback",
        "OPENAI_BASE_URL": f"{server.url}/v1",
        "OPENAI_MODEL": "test-model",
    }
    path = tmp_path / "codecompanion.py"
    path.write_text(f"acp = {{'qwen_code': {{'cmd': [{str(QWEN)!r}, '--acp'], 'env': {env!r}}}}}\n")
    return path


def test_qwen_answers_reads_unsaved_text_writes_through_review_and_asks_for_commands(
    start_nvim: Start, model: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes, code = project / "notes.txt", project / "code.py"
    notes.write_text("on disk\n")
    code.write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n")
    model.enqueue(openai_text("Hello from the local model.", chunks=6, delay=0.05))
    ed = start_nvim(config_file=qwen_config(tmp_path, model), cwd=project)
    ed.nvim.command(f"edit {notes}")
    ed.nvim.current.buffer[0] = "typed, not saved"
    ed.nvim.command(f"split {code}")
    code_buf = ed.nvim.current.buffer.number
    chat = open_agent(ed, "qwen_code")
    ed.send("say hello")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    assert "Hello from the local model." in ed.text(chat)
    # A read of a file whose buffer has unsaved text, an edit of two hunks (one accepted), a
    # command rejected (the turn goes on), the same allowed always.
    old_code, new_code = code.read_text(), "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 60\n"
    edit = {"file_path": str(code), "old_string": old_code, "new_string": new_code}
    command = {"command": "echo ran; touch made.txt", "description": "make a file"}
    model.enqueue(
        openai_tool_calls(  # Qwen Code edits only a file it has read
            [
                ("c0", "read_file", {"file_path": str(notes)}),
                ("c1", "read_file", {"file_path": str(code)}),
            ]
        ),
        openai_tool_calls([("c2", "edit", edit)]),
        openai_tool_calls([("c3", "run_shell_command", command)]),
        openai_tool_calls([("c4", "run_shell_command", command)]),
        openai_text("All done."),
    )
    ed.answer("approve", "Review each hunk", "Accept", "Reject", "reject", "always")
    ed.send("read, write, run")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=120)
    results = tool_results(model)
    assert any("typed, not saved" in r for r in results), results
    assert code.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"
    assert ed.lines(code_buf)[0] == "a = 10"
    assert (project / "made.txt").exists() and "All done." in ed.text(chat)
    assert "`execute` echo ran; touch made.txt" in ed.text(chat)  # asked before announced
    # Qwen Code's "always" reaches further than the call (the question's preview says so): a
    # wildcard rule it writes into the project's settings itself.
    assert "Bash(touch *)" in (project / ".qwen" / "settings.json").read_text()
    assert approval_items(ed) == [["approve", "always", "reject"]] * 3  # no reject_always
    changes = ed.lua("return require('codecompanion').changes()")
    assert ("code.py", "modified") in [(c["path"], c["status"]) for c in changes]
    ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('undo') end)", code_buf)
    assert ed.lines(code_buf)[0] == "a = 1"  # Qwen Code's write was one undo step
    ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('edit!') end)", code_buf)
    ed.lua("require('codecompanion').rewind({ turn = 2, code = true, conversation = false })")
    wait_for(lambda: code.read_text().startswith("a = 1\n"), 20)


def test_qwen_is_cancelled_mid_turn_and_resumed_after_a_restart(
    start_nvim: Start, model: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = qwen_config(tmp_path, model)
    model.enqueue(openai_text("First answer."))
    ed = start_nvim(config_file=config, cwd=project)
    chat = open_agent(ed, "qwen_code")
    ed.send("first")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    ed.answer(1)  # gM: Qwen Code's modes (plan, default, auto-edit, yolo), pick "Plan"
    ed.nvim.input("gM")
    wait_for(lambda: ed.lua("return vim.b[...].codecompanion_acp_mode.current", chat) == "plan")
    slow = openai_text(" ".join(f"word{i}" for i in range(200)), chunks=200, delay=0.1)
    model.enqueue(slow)
    ed.send("a long answer")
    wait_for(lambda: "word3" in ed.text(chat), 60)
    assert "Plan mode is active" in json.dumps(model.requests[-1].body)  # Qwen Code took it
    ed.nvim.input("q")
    ed.wait_event("CodeCompanionChatStopped", timeout=30)
    assert "word150" not in ed.text(chat)
    chat_id = ed.lua("return require('codecompanion').chat_id(...)", chat)
    with contextlib.suppress(EOFError, OSError):
        ed.nvim.command("qa!")
    model.enqueue(openai_text("After the restart."))
    ed2 = start_nvim(config_file=config, cwd=project)
    restored = int(ed2.lua("return require('codecompanion').chat({ restore = ... })", chat_id))
    wait_for(lambda: "First answer." in ed2.text(restored), 20)
    ed2.send("again")
    ed2.wait_event("CodeCompanionChatDone", timeout=90)
    text = ed2.text(restored)
    assert "After the restart." in text and text.count("First answer.") == 1
    saved = json.loads(next(tmp_path.rglob(f"chats/{chat_id}.json")).read_text())
    assert saved["driver"]["agent"] == "qwen_code" and saved["driver"]["session_id"]
    sent = json.dumps(model.requests[-1].body)
    assert "First answer." in sent  # Qwen Code loaded its session: the model saw the first turn


def test_what_the_project_makes_qwen_do_unasked_is_asked_about_before_it_starts(
    start_nvim: Start, model: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".qwen").mkdir(parents=True)
    hook = {"type": "command", "command": "touch hook-ran"}
    rules = {"permissions": {"allow": ["Bash(*)"]}, "hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (project / ".qwen" / "settings.json").write_text(json.dumps(rules))
    command = {"command": "touch unasked.txt"}
    model.enqueue(openai_tool_calls([("c1", "run_shell_command", command)]), openai_text("Ran."))
    ed = start_nvim(config_file=qwen_config(tmp_path, model), cwd=project)
    chat = open_agent(ed, "qwen_code")
    ed.answer("reject")  # not started: its hook does not run
    ed.send("run it")
    ed.wait_event("CodeCompanionChatDone", timeout=60)

    def said() -> str:
        return str(ed.lua("return vim.api.nvim_exec2('messages', {output = true}).output"))

    wait_for(lambda: "qwen_code not started" in said(), 10)
    assert "the project's .qwen/settings.json allows Bash(*); runs hooks on SessionStart" in said()
    assert not (project / "hook-ran").exists()
    ed.answer("approve")  # asked again at the next message: started all the same
    ed.send("run it")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=90)
    # The repository's rule lets Qwen Code run the command without a question, and its hook.
    assert (project / "unasked.txt").exists() and "Ran." in ed.text(chat)
    wait_for(lambda: (project / "hook-ran").exists(), 10)
    assert approval_items(ed) == [["approve", "reject"]] * 2
