"""Mistral Vibe (PyPI `mistral-vibe`, whose ACP tools go through the editor) through real Neovim,
against a scripted OpenAI-compatible server on 127.0.0.1, in a network namespace with only
loopback: a streamed answer, a read that sees unsaved buffer text, a write reviewed hunk by hunk
(in `changes()`, rewound, one undo step), a command through `terminal/*` in the sandbox (a write
outside the project fails), permissions, a cancel mid-turn and a session loaded after a restart."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.agent_tier import ROOT, approval_items, open_agent, tool_results, why_not
from tests.support.nvim import Editor, wait_for

VIBE = Path(os.environ.get("CODECOMPANION_VIBE") or ROOT / ".venv-agents/vibe/bin/vibe-acp")


pytestmark = pytest.mark.skipif(
    why_not(dict(os.environ), VIBE, "Mistral Vibe") is not None,
    reason=why_not(dict(os.environ), VIBE, "Mistral Vibe") or "",
)


def vibe_config(tmp_path: Path, server: LoopbackServer) -> Path:
    """Vibe's home (its config: the loopback server as a llama.cpp provider, telemetry, update
    checks and notifications off) and our config naming it."""
    home = tmp_path / "vibe-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'active_model = "local"\n'
        "enable_telemetry = false\nenable_update_checks = false\n"
        "enable_auto_update = false\nenable_notifications = false\n"
        f'[[providers]]\nname = "llamacpp"\napi_base = "{server.url}/v1"\napi_key_env_var = ""\n'
        '[[models]]\nname = "test-model"\nprovider = "llamacpp"\nalias = "local"\n'
    )
    path = tmp_path / "codecompanion.py"
    path.write_text(
        f"acp = {{'mistral_vibe': {{'cmd': [{str(VIBE)!r}],"
        f" 'env': {{'VIBE_HOME': {str(home)!r}}}}}}}\n"
    )
    return path


def open_vibe(ed: Editor) -> int:
    return open_agent(ed, "mistral_vibe")


Start = Callable[..., Editor]


def test_vibe_answers_reads_unsaved_text_writes_through_review_and_runs_in_the_sandbox(
    start_nvim: Start, model: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes, code = project / "notes.txt", project / "code.py"
    notes.write_text("on disk\n")
    code.write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n")
    outside = tmp_path / "outside.txt"
    model.enqueue(openai_text("Hello from the local model."))
    ed = start_nvim(config_file=vibe_config(tmp_path, model), cwd=project)
    ed.nvim.command(f"edit {notes}")
    ed.nvim.current.buffer[0] = "typed, not saved"
    notes_buf = ed.nvim.current.buffer.number
    ed.nvim.command(f"split {code}")
    code_buf = ed.nvim.current.buffer.number
    chat = open_vibe(ed)
    ed.send("say hello")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    assert "Hello from the local model." in ed.text(chat)
    # A read of a file whose buffer has unsaved text, a write of two hunks (one accepted), a
    # command that writes in the project and outside it.
    old_code, new_code = code.read_text(), "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 60\n"
    edit = {"file_path": str(code), "old_string": old_code, "new_string": new_code}
    command = f"echo ran; touch made.txt; touch {outside}; echo done"
    model.enqueue(
        openai_tool_calls([("c1", "read_file", {"file_path": str(notes)})]),
        openai_tool_calls([("c2", "edit", edit)]),
        openai_tool_calls([("c3", "bash", {"command": command})]),
        openai_text("All three done."),
    )
    ed.answer("approve", "Review each hunk", "Accept", "Reject", "always")
    ed.send("read, write, run")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=120)
    results = tool_results(model)
    assert any("typed, not saved" in r for r in results), results
    assert code.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"
    assert ed.lines(code_buf)[0] == "a = 10"
    assert (project / "made.txt").exists() and not outside.exists()
    changes = ed.lua("return require('codecompanion').changes()")
    assert ("code.py", "modified") in [(c["path"], c["status"]) for c in changes]
    ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('undo') end)", code_buf)
    assert ed.lines(code_buf)[0] == "a = 1"  # Vibe's write was one undo step
    ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('edit!') end)", code_buf)
    assert "All three done." in ed.text(chat)
    assert ed.lines(notes_buf)[0] == "typed, not saved"
    # A reject rejects that call, not the turn: the agent goes on and answers.
    model.enqueue(
        openai_tool_calls(
            [("c4", "write_file", {"file_path": str(project / "no.txt"), "content": "x"})]
        ),
        openai_text("Understood, not written."),
    )
    ed.answer("reject")
    ed.send("write no.txt")
    ed.wait_event("CodeCompanionChatDone", count=3, timeout=90)
    assert "Understood, not written." in ed.text(chat) and not (project / "no.txt").exists()
    kinds = approval_items(ed)
    assert kinds[0] == ["approve", "always", "reject"]  # Vibe offers no reject_always
    # The write is rewound with the chat's checkpoints.
    ed.lua("require('codecompanion').rewind({ turn = 2, code = true, conversation = false })")
    wait_for(lambda: code.read_text().startswith("a = 1\n"), 20)


def test_vibe_is_cancelled_mid_turn_and_resumed_after_a_restart(
    start_nvim: Start, model: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = vibe_config(tmp_path, model)
    model.enqueue(openai_text("First answer."))
    ed = start_nvim(config_file=config, cwd=project)
    chat = open_vibe(ed)
    ed.send("first")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    slow = openai_text(" ".join(f"word{i}" for i in range(200)), chunks=200, delay=0.1)
    model.enqueue(slow)
    ed.send("a long answer")
    wait_for(lambda: "word3" in ed.text(chat), 60)
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
    assert saved["driver"]["agent"] == "mistral_vibe" and saved["driver"]["session_id"]
    last = model.requests[-2].body if len(model.requests) > 1 else {}
    sent = json.dumps(last)
    assert "First answer." in sent  # Vibe loaded its session: the model saw the earlier turn


def _bodies(server: LoopbackServer) -> list[Any]:
    return [r.body for r in server.requests]
