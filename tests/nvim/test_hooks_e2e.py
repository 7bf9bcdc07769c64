"""Hooks on real Neovim with a scripted model: PreToolUse blocks `rm -rf` and the model reads
why, PostToolUse formats an edited file, a hook that hangs is killed at its timeout."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.chat import chat_requests
from tests.support.hook_scripts import BLOCK_RM, FORMAT, SWAP, hook_command
from tests.support.nvim import Editor, ProjectNvim, wait_for


def _hooks(event: str, matcher: str, command: str, timeout: float = 30) -> str:
    entry = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }
    return f"hooks = {{{event!r}: [{entry!r}]}}\n"


def test_a_pre_tool_use_hook_blocks_rm_rf_and_the_model_reads_why(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    (project / "build").mkdir()
    command = hook_command(tmp_path / "hooks", "block_rm", BLOCK_RM)
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": "rm -rf build"})]),
        openai_text("I will name the files instead."),
    )
    ed = project_nvim(_hooks("PreToolUse", "Bash", command))
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("clean up with @{run_command}")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    result = chat_requests(provider_server)[1]["messages"][-1]
    assert result["role"] == "tool"
    assert "rm -rf is not allowed here: name the files" in result["content"]
    assert (project / "build").is_dir()
    assert not [p for p in ed.prompts() if "rm -rf" in (p["prompt"] or "")]  # never asked
    assert "blocked PreToolUse: rm -rf is not allowed here" in ed.text(bufnr)


def test_a_hook_that_changes_a_command_and_asks_shows_what_will_run(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, tmp_path: Path
) -> None:
    # The allow rule would run `echo one` unasked: the hook's "ask" is asked all the same,
    # about the command it put in place.
    command = hook_command(tmp_path / "hooks", "swap", SWAP) + " ask"
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": "echo one"})]), openai_text("it said two")
    )
    allow = "opts = {'tools': {'run_command': {'allow': ['echo *']}}}\n"
    ed = project_nvim(allow + _hooks("PreToolUse", "Bash", command))
    bufnr = ed.open_chat()
    ed.send("say one with @{run_command}")
    # While it is asked, the tool line already shows the command that will run.
    wait_for(lambda: ed.prompts(), timeout=20)
    wait_for(lambda: "echo two" in ed.text(bufnr))
    assert "echo one" not in ed.text(bufnr).split("say one with")[-1]
    ed.answer("approve")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    asked = [p["prompt"] for p in ed.prompts() if "echo" in (p["prompt"] or "")]
    assert len(asked) == 1, asked
    assert asked[0].startswith(
        "A hook asks (one became two: look first): Run the command `echo two`?"
    )
    result = chat_requests(provider_server)[1]["messages"][-1]["content"]
    assert "two" in result and "a hook changed this call's arguments" in result
    text = ed.text(bufnr)
    assert "changed the call's arguments" in text and "echo two" in text, text


def test_a_post_tool_use_hook_formats_the_edited_file(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    (project / "a.py").write_text("def f():\n    return 1\n")
    command = hook_command(tmp_path / "hooks", "format", FORMAT)
    edits = [{"oldText": "    return 1", "newText": "\treturn 2", "replaceAll": False}]
    args = {"filepath": "a.py", "edits": edits, "explanation": "two", "mode": None}
    provider_server.enqueue(
        openai_tool_calls([("c1", "insert_edit_into_file", args)]), openai_text("done")
    )
    config = "permissions = {'mode': 'edits'}\n" + _hooks("PostToolUse", "Edit|Write", command)
    ed = project_nvim(config)
    ed.open_chat()
    ed.send("return two, @{insert_edit_into_file}")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    assert (project / "a.py").read_text() == "def f():\n    return 2\n"


def test_a_hook_that_hangs_is_killed_at_its_timeout_with_one_line(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    args = {"filepath": "a.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    provider_server.enqueue(openai_tool_calls([("c1", "read_file", args)]), openai_text("read"))
    ed = project_nvim(_hooks("PreToolUse", "Read", "sleep 60", timeout=1))
    bufnr = ed.open_chat()
    ed.send("read it with @{read_file}")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    lines = [line for line in ed.lines(bufnr) if "timed out" in line]
    assert lines == ["_[hook `sleep 60` timed out after 1s: killed]_"]
    assert "alpha" in json.dumps(chat_requests(provider_server)[1]["messages"][-1])
    wait_for(lambda: "timed out after 1s" in ed.lua("return vim.fn.execute('messages')"))


def test_checkhealth_counts_the_hooks_of_each_event(project_nvim: ProjectNvim) -> None:
    ed = project_nvim(_hooks("PreToolUse", "Bash", "true") + "hooks['Stop'] = ['true', 'true']\n")
    ed.open_chat()  # the host is up: the health request waits 2 s at most
    ed.wait_event("CodeCompanionChatCreated")
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.nvim.current.buffer[:])
    assert "hooks: PreToolUse: 1, Stop: 2" in text


SEEN = """\
def seen(event):
    return {"systemMessage": "saw " + event["tool_name"]}

hooks = {"PostToolUse": [{"matcher": "run_command", "hooks": [seen]}]}
"""


def test_the_demo_chat_keeps_its_hook_lines_after_it_is_cleared(
    start_nvim: Callable[..., Editor], tmp_path: Path
) -> None:
    # A cleared demo chat gets a fresh folder and tools made again: its hooks still speak
    # in its buffer, not only in the log.
    temp = tmp_path / "tmp"
    temp.mkdir()
    config = tmp_path / "codecompanion.py"
    config.write_text(SEEN)
    ed = start_nvim(config_file=config, cwd=tmp_path, env={"TMPDIR": str(temp)})
    bufnr = ed.open_chat()
    line = "_[hook seen(): saw run_command]_"
    for run in (1, 2):
        wait_for(lambda: "Offline demo" in ed.text(bufnr))
        ed.answer("Accept all", "approve", "Accept all")
        ed.send("show me")
        ed.wait_event("CodeCompanionChatDone", count=run, timeout=30)
        assert ed.text(bufnr).count(line) == 1, ed.text(bufnr)
        ed.nvim.input("gx")
        wait_for(lambda: line not in ed.text(bufnr))
