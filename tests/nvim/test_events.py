"""CodeCompanion's User events: each fires once, when it should, with CodeCompanion's data;
`CodeCompanionFileEdited` for every file a tool creates, edits or deletes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor, ProjectNvim

StartNvim = Callable[..., Editor]
EDIT = {
    "filepath": "b.txt",
    "edits": [{"oldText": "beta", "newText": "BETA", "replaceAll": False}],
    "explanation": "shout",
    "mode": "append",
}


def test_file_edited_fires_for_each_file_a_tool_writes(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    (project / "b.txt").write_text("alpha\nbeta\ngamma\n")
    (project / "c.txt").write_text("gone soon\n")
    provider_server.enqueue(
        openai_tool_calls([("w1", "create_file", {"filepath": "a.txt", "content": "new\n"})]),
        openai_tool_calls([("w2", "insert_edit_into_file", EDIT)]),
        openai_tool_calls([("w3", "delete_file", {"filepath": "c.txt"})]),
        openai_text("All three."),
    )
    extra = "opts = {'tool_system': {'yolo': False}}\n"
    ed = project_nvim(extra)
    ed.nvim.command("edit b.txt")
    b_buf = ed.nvim.current.buffer.number
    chat = ed.open_chat()
    ed.answer("Accept all", "Accept all", "approve")
    ed.send("@{files} write them")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    edited = [e["data"] for e in ed.events() if e["name"] == "CodeCompanionFileEdited"]
    assert [(d["tool"], Path(d["path"]).name) for d in edited] == [
        ("create_file", "a.txt"),
        ("insert_edit_into_file", "b.txt"),
        ("delete_file", "c.txt"),
    ]
    assert all(Path(d["path"]).is_absolute() for d in edited)
    assert edited[1]["line"] == 2 and edited[1]["bufnr"] == b_buf  # the loaded file's buffer
    assert all(d["chat_bufnr"] == chat for d in edited)
    assert "bufnr" not in edited[0] or edited[0]["bufnr"] is None
    # The log says what the user did with each diff, after the call's own line.
    log = (tmp_path / "state" / "nvim" / "codecompanion.log").read_text()
    assert "insert_edit_into_file call w2: runs: tool needs no approval" in log
    assert "insert_edit_into_file call w2: diff of" in log
    assert "b.txt reviewed: 1 hunk(s) accepted, 0 rejected" in log


def test_each_documented_event_fires_once_with_its_data(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    read = {"filepath": "a.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    provider_server.enqueue(
        openai_tool_calls([("r1", "read_file", read)], text="Reading."), openai_text("Read.")
    )
    ed = start_nvim(config_file=config_file(""), cwd=tmp_path)
    chat = ed.open_chat()
    ed.send("@{read_file} look")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    ed.lua("require('codecompanion').toggle()")  # hide
    ed.lua("require('codecompanion').toggle()")  # show again
    ed.wait_event("CodeCompanionChatOpened", count=2)
    ed.nvim.input("gx")
    ed.wait_event("CodeCompanionChatCleared")
    ed.nvim.command(f"bwipeout! {chat}")
    ed.wait_event("CodeCompanionChatClosed")
    counts = Counter(ed.event_names())
    once = [
        "ChatCreated",
        "ChatSubmitted",
        "ChatDone",
        "ChatToolAdded",
        "ToolsStarted",
        "ToolStarted",
        "ToolFinished",
        "ToolsFinished",
        "ChatHidden",
        "ChatCleared",
        "ChatClosed",
    ]
    assert {name: counts["CodeCompanion" + name] for name in once} == dict.fromkeys(once, 1)
    assert counts["CodeCompanionRequestStarted"] == counts["CodeCompanionRequestFinished"] == 2
    assert counts["CodeCompanionChatOpened"] == 2  # opened, then shown again after hiding
    data = {e["name"].removeprefix("CodeCompanion"): e["data"] for e in ed.events()}
    assert data["ChatSubmitted"]["bufnr"] == chat and data["ChatSubmitted"]["id"]
    assert data["ChatToolAdded"]["tool"] == "read_file"
    assert data["ToolStarted"]["args"] == read and data["ToolStarted"]["name"] == "read_file"
    assert data["ToolFinished"]["status"] == "success"
    assert data["ToolsFinished"]["status"] == "success"
    assert data["ChatDone"]["status"] == "success"
    assert data["ChatHidden"]["bufnr"] == chat
