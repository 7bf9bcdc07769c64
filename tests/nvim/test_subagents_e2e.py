"""Subagents on real Neovim with a scripted model: a read-only subagent reads three files and
the parent's next request carries only its summary; a subagent's write is asked in the parent's
buffer (refused without approval) and captured by the parent's checkpoints when approved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.chat import chat_requests
from tests.support.nvim import ProjectNvim, wait_for


def _agent(project: Path, name: str, front: str, body: str) -> None:
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{front}---\n{body}\n")


def _read(path: str) -> dict[str, Any]:
    return {"filepath": path, "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}


def test_a_read_only_subagent_reads_three_files_and_the_parent_gets_one_summary(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    for name in ("a", "b", "c"):
        (project / f"{name}.txt").write_text(f"CONTENT-{name.upper()} " * 50 + "\n")
    _agent(project, "reader", "description: Reads files.\ntools: Read, Grep, Glob\n", "Summarise.")
    task = {"agent": "reader", "task": "Summarise a.txt, b.txt and c.txt."}
    provider_server.enqueue(
        openai_tool_calls([("p1", "agent", task)]),  # the parent hands the task over
        openai_tool_calls([(f"s{n}", "read_file", _read(f"{n}.txt")) for n in "abc"]),
        openai_text("SUMMARY: three files of repeated capital words."),  # the subagent's answer
        openai_text("The subagent says the files repeat words."),  # the parent's answer
        openai_text("second answer"),
    )
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("what is in a, b and c?")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    ed.send("and then?")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=20)
    first, sub1, sub2, after, following = chat_requests(provider_server)
    assert "agent" in [t["function"]["name"] for t in first["tools"]]
    assert "- reader: Reads files." in json.dumps(first["messages"])
    assert sorted(t["function"]["name"] for t in sub1["tools"]) == [
        "file_search",
        "grep_search",
        "read_file",
    ]
    assert sub1["messages"][0]["content"].endswith("\n\nSummarise.")
    assert sub1["messages"][0]["content"].startswith("You are a subagent")
    assert sub1["messages"][-1]["content"] == "Summarise a.txt, b.txt and c.txt."
    assert sum("CONTENT-" in (m.get("content") or "") for m in sub2["messages"]) == 3
    for request in (after, following):
        sent = json.dumps(request["messages"])
        assert "SUMMARY: three files" in sent and "CONTENT-" not in sent
    text = ed.text(bufnr)
    lines = ed.lines(bufnr)
    row = lines.index("Subagent `reader`: 3 calls:") + 1
    assert ed.lua("return vim.fn.foldclosed(...)", row) != -1  # one folded section
    assert "Subagent `reader`: 3 calls (zo shows them and its answer)" in text
    assert "- read_file a.txt" in text
    assert "agent" not in [t["function"]["name"] for t in sub1["tools"]]  # one level deep


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    edits = [{"oldText": old, "newText": new, "replaceAll": False}]
    return {"filepath": path, "edits": edits, "explanation": "edit", "mode": None}


def test_a_subagents_write_is_asked_in_the_parent_and_captured_by_its_checkpoints(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "a.py").write_text("x = 0\n")
    _agent(project, "writer", "description: Edits files.\ntools: [Read, Edit]\n", "Edit.")
    task = {"agent": "writer", "task": "Set x to 1 in a.py."}
    provider_server.enqueue(
        openai_tool_calls([("p1", "agent", task)]),
        openai_tool_calls([("w1", "insert_edit_into_file", _edit("a.py", "x = 0", "x = 1"))]),
        openai_text("I could not: the user rejected it."),
        openai_text("Not changed."),
        openai_tool_calls([("p2", "agent", task)]),
        openai_tool_calls([("w2", "insert_edit_into_file", _edit("a.py", "x = 0", "x = 1"))]),
        openai_text("x is 1 now."),
        openai_text("Changed."),
    )
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.answer("Reject")
    ed.send("set x to 1")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    asked = [p["prompt"] for p in ed.prompts()]
    assert any("a.py" in (prompt or "") for prompt in asked), asked
    assert (project / "a.py").read_text() == "x = 0\n"  # refused without approval
    requests = chat_requests(provider_server)
    assert "rejected" in requests[2]["messages"][-1]["content"]

    ed.answer("Accept all")
    ed.send("again, please")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=20)
    assert (project / "a.py").read_text() == "x = 1\n"
    listing = wait_for(
        lambda: ed.lua("return require('codecompanion').checkpoints(...)", bufnr) or None
    )
    assert [c["turn"] for c in listing] == [1, 2]
    assert listing[1]["files"] == ["a.py"]
    ed.lua("require('codecompanion').rewind({ turn = 2, code = true, conversation = false })")
    ed.wait_event("CodeCompanionRewind", timeout=20)
    assert (project / "a.py").read_text() == "x = 0\n"  # the subagent's edit is rewound


def _running(word: str) -> bool:
    """True while a process whose command line holds `word` is alive."""
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if entry.name.isdigit() and word in line:
                return True
        except OSError:
            continue
    return False


def test_stop_stops_a_running_subagent_and_its_command(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    _agent(project, "runner", "description: Runs commands.\ntools: Bash\n", "Run it.")
    task = {"agent": "runner", "task": "Wait a while."}
    provider_server.enqueue(
        openai_tool_calls([("p1", "agent", task)]),
        openai_tool_calls([("r1", "run_command", {"cmd": "sleep 37.5"})]),
    )
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("wait")
    wait_for(lambda: _running("sleep 37.5"), timeout=20)
    # The command's question was asked in the parent's buffer, under the subagent's name.
    asked = [p["prompt"] or "" for p in ed.prompts()]
    assert any(q.startswith("Subagent `runner`: ") and "sleep 37.5" in q for q in asked), asked
    ed.nvim.command(f"{ed.nvim.funcs.bufwinnr(bufnr)}wincmd w")
    ed.nvim.input("q")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    assert "CodeCompanionChatStopped" in ed.event_names()
    wait_for(lambda: not _running("sleep 37.5"), timeout=10)
    assert len(chat_requests(provider_server)) == 2  # nothing was sent after the stop
