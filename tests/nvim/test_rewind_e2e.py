"""Checkpoints on real Neovim with a scripted model: three turns of edits, a command and the
user's own changes; rewind code, undo it, rewind the conversation (and the saved chat)."""

from __future__ import annotations

import json
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import ProjectNvim, wait_for

ALLOW_MV = "opts = {'tools': {'run_command': {'allow': ['mv *']}}}\n"


def edit(path: str, old: str, new: str) -> dict[str, object]:
    return {
        "filepath": path,
        "edits": [{"oldText": old, "newText": new, "replaceAll": False}],
        "explanation": "edit",
        "mode": "append",
    }


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def test_three_turns_rewound_undone_and_the_conversation_cut(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    for name, text in {
        "a.py": "a = 0\n",
        "open.py": "o = 0\n",
        "gone.txt": "to be moved\n",
        "mine.txt": "mine 0\n",
    }.items():
        (project / name).write_text(text)
    original = files(project)
    provider_server.enqueue(
        openai_tool_calls(
            [
                ("t1a", "insert_edit_into_file", edit("a.py", "a = 0", "a = 1")),
                ("t1b", "create_file", {"filepath": "new.py", "content": "n = 1\n"}),
                ("t1c", "insert_edit_into_file", edit("open.py", "o = 0", "o = 1")),
            ]
        ),
        openai_text("turn one done"),
        openai_tool_calls([("t2", "run_command", {"cmd": "mv gone.txt out.txt"})]),
        openai_text("turn two done"),
        openai_tool_calls([("t3", "insert_edit_into_file", edit("a.py", "a = 1", "a = 3"))]),
        openai_text("turn three done"),
    )
    ed = project_nvim(ALLOW_MV, setup={"yolo": True})
    chat = ed.open_chat()
    ed.send("first: edit and create\n@{insert_edit_into_file} @{create_file} @{run_command}")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    assert "_3 files changed: a.py +1 −1, new.py (new) +1, open.py +1 −1_" in ed.text(chat)
    (project / "mine.txt").write_text("mine by hand\n")  # the user, outside Neovim
    ed.nvim.command(f"split {project / 'open.py'}")  # and in a buffer, not saved
    source = ed.nvim.current.buffer.number
    ed.nvim.current.buffer[0] = "o = 'typed, unsaved'"
    ed.nvim.command(f"{ed.nvim.funcs.bufwinnr(chat)}wincmd w")
    ed.send("second: run a command")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=20)
    ed.send("third: edit again")
    ed.wait_event("CodeCompanionChatDone", count=3, timeout=20)
    after3 = files(project)
    assert after3["a.py"] == b"a = 3\n" and "out.txt" in after3 and "gone.txt" not in after3
    listing = ed.lua("return require('codecompanion').checkpoints(...)", chat)
    assert [(c["turn"], c["text"]) for c in listing] == [
        (1, "first: edit and create"),
        (2, "second: run a command"),
        (3, "third: edit again"),
    ]
    assert listing[0]["files"] == ["a.py", "gone.txt", "new.py", "open.py", "out.txt"]
    changes = ed.lua("return require('codecompanion').changes({ since_turn = 2 })")
    assert [(f["path"], f["status"]) for f in changes] == [
        ("a.py", "modified"),
        ("gone.txt", "deleted"),
        ("out.txt", "added"),
    ]
    assert changes[0]["hunks"][0]["new_start"] == 1
    assert ed.prompts() == []

    # Rewind the code to before turn 1: the unsaved buffer is asked about.
    ed.answer("Discard the buffer's changes and restore")
    ed.lua("require('codecompanion').rewind({ turn = 1, code = true, conversation = false })")
    rewind = ed.wait_event("CodeCompanionRewind", timeout=20)[0]["data"]
    assert [p["prompt"] for p in ed.prompts()] == [
        f"{project / 'open.py'} has unsaved changes in a buffer"
    ]
    now = files(project)
    assert now == {**original, "mine.txt": b"mine by hand\n"}
    assert ed.lines(source) == ["o = 0"]  # the buffer shows the restored text
    assert not ed.nvim.api.get_option_value("modified", {"buf": source})
    assert sorted(rewind["files"]) == ["a.py", "gone.txt", "new.py", "open.py", "out.txt"]

    ed.lua("require('codecompanion').rewind_undo()")
    ed.wait_event("CodeCompanionRewind", count=2, timeout=20)
    assert files(project) == after3
    assert ed.lines(source) == ["o = 1"]

    # Rewind the conversation to before turn 2: the chat and the saved chat are cut.
    ed.lua("require('codecompanion').rewind({ turn = 2, code = false, conversation = true })")
    ed.wait_event("CodeCompanionRewind", count=3, timeout=20)
    text = wait_for(lambda: "turn two done" not in ed.text(chat) and ed.text(chat))
    assert "turn one done" in text and "third" not in text
    assert ed.lines(chat)[-1] == "second: run a command"  # back under ## Me, to edit
    chat_id = ed.lua("return require('codecompanion').chat_id(...)", chat)
    saved = tmp_path / "data" / "nvim" / "codecompanion" / "chats" / f"{chat_id}.json"
    users = [m["content"] for m in json.loads(saved.read_text())["messages"] if m["role"] == "user"]
    assert len(users) == 1 and "first: edit and create" in users[0]
    assert files(project) == after3  # the conversation alone leaves the files
    names = ed.event_names()
    assert names.count("CodeCompanionCheckpoint") >= 9


def test_review_keeps_and_reverts_per_hunk_and_per_file(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "a.py").write_text("one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
    provider_server.enqueue(
        openai_tool_calls(
            [
                ("e1", "insert_edit_into_file", edit("a.py", "one", "ONE")),
                ("e2", "insert_edit_into_file", edit("a.py", "seven", "SEVEN")),
                ("c1", "create_file", {"filepath": "b.txt", "content": "bee\n"}),
            ]
        ),
        openai_text("done"),
    )
    ed = project_nvim(setup={"yolo": True})
    chat = ed.open_chat()
    ed.send("edit\n@{insert_edit_into_file} @{create_file}")
    ed.wait_event("CodeCompanionChatDone", timeout=20)

    def qf() -> list[str]:
        return list(ed.lua("return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())"))

    ed.lua("require('codecompanion').review()")
    wait_for(lambda: len(qf()) == 3)
    assert qf() == ["a.py hunk 1/2 +1 -1", "a.py hunk 2/2 +1 -1", "b.txt hunk 1/1 +1 -0"]
    view = ed.nvim.current.buffer

    def go(text: str) -> None:
        row = next(i for i, line in enumerate(ed.lines(view.number), 1) if line == text)
        ed.nvim.current.window.cursor = (row, 0)

    go("+SEVEN")
    ed.nvim.input("r")  # revert that hunk only
    wait_for(lambda: (project / "a.py").read_text().endswith("six\nseven\n"))
    assert (project / "a.py").read_text().startswith("ONE\n")
    wait_for(lambda: len(qf()) == 2)
    go("+bee")
    ed.nvim.input("K")  # keep the new file: it leaves the list, and stays
    wait_for(lambda: qf() == ["a.py hunk 1/1 +1 -1"])
    assert (project / "b.txt").exists()
    go("+ONE")
    ed.nvim.input("R")  # revert the whole file
    wait_for(lambda: (project / "a.py").read_text() == "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
    ed.nvim.command(f"{ed.nvim.funcs.bufwinnr(chat)}wincmd w")
    ed.lua("require('codecompanion').rewind_undo()")  # a revert is undone like a rewind
    wait_for(lambda: (project / "a.py").read_text().startswith("ONE\n"))
