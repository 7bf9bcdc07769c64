"""read_file asks Neovim for a file's lines only when a buffer holds it: Lua pushes the loaded
files to the host, so reading any other file costs no round trip, and a buffer opened, renamed
or wiped later is seen by the next call."""

from __future__ import annotations

from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor, ProjectNvim

COUNT_ASKS = """
local editor = require("codecompanion.editor")
local original = editor.buffer_lines
_G.asked = {}
editor.buffer_lines = function(path)
  table.insert(_G.asked, path)
  return original(path)
end
"""


def read(path: str, call_id: str) -> tuple[str, str, dict[str, object]]:
    args = {"filepath": path, "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    return (call_id, "read_file", args)


def tool_result(server: LoopbackServer, call_id: str) -> str:
    messages = server.requests[-1].json()["messages"]
    return str(next(m["content"] for m in messages if m.get("tool_call_id") == call_id))


def exchange(ed: Editor, server: LoopbackServer, call: tuple[str, str, dict[str, object]]) -> str:
    server.enqueue(openai_tool_calls([call]), openai_text("read"))
    done = len([e for e in ed.events() if e["name"] == "CodeCompanionChatDone"])
    ed.send("@{read_file} read it")
    ed.wait_event("CodeCompanionChatDone", count=done + 1, timeout=15)
    return tool_result(server, call[0])


def test_only_files_loaded_in_buffers_are_asked_for(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "disk.txt").write_text("on disk\n")
    (project / "open.txt").write_text("saved text\n")
    (project / "link.txt").symlink_to(project / "open.txt")
    ed = project_nvim()
    ed.lua(COUNT_ASKS)
    chat = ed.open_chat()

    assert "on disk" in exchange(ed, provider_server, read("disk.txt", "r1"))
    assert ed.lua("return _G.asked") == []  # no buffer holds it: no round trip

    ed.nvim.command("split " + str(project / "open.txt"))
    ed.nvim.current.buffer[0] = "unsaved text"
    ed.nvim.command("wincmd p")
    assert ed.nvim.current.buffer.number == chat
    assert "unsaved text" in exchange(ed, provider_server, read("link.txt", "r2"))
    assert len(ed.lua("return _G.asked")) == 1

    ed.nvim.command("bwipeout! " + str(project / "open.txt"))
    ed.nvim.api.set_current_buf(chat)
    result = exchange(ed, provider_server, read("open.txt", "r3"))
    assert "saved text" in result and "unsaved" not in result
    assert len(ed.lua("return _G.asked")) == 1  # wiped: read from disk without asking
