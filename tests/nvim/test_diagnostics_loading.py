"""get_diagnostics on a file no buffer shows: Neovim loads it only if it is small enough, and the
hidden buffer is wiped afterwards, so a later edit of the file goes to the disk."""

from __future__ import annotations

from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor, ProjectNvim, wait_for


def buffer_state(ed: Editor, path: Path) -> dict[str, object]:
    return dict(
        ed.lua(
            "local path = ...; local n = vim.fn.bufnr(path);"
            "return { exists = n ~= -1, loaded = n ~= -1 and vim.api.nvim_buf_is_loaded(n),"
            " modified = vim.tbl_map(function(b) return b.name end,"
            " vim.fn.getbufinfo({ bufmodified = 1 })) }",
            str(path),
        )
    )


def test_a_buffer_loaded_for_diagnostics_is_wiped_and_the_next_edit_reaches_the_disk(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    target = project / "notes.py"
    target.write_text("alpha = 1\nbeta = 2\n")
    edit = {
        "filepath": "notes.py",
        "edits": [{"oldText": "beta = 2", "newText": "beta = 3", "replaceAll": False}],
        "explanation": "bump beta",
        "mode": "append",
    }
    provider_server.enqueue(
        openai_tool_calls([("d1", "get_diagnostics", {"filepath": "notes.py", "severity": None})]),
        openai_tool_calls([("e1", "insert_edit_into_file", edit)]),
        openai_text("done"),
    )
    ed = project_nvim()
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all")
    ed.send("@{get_diagnostics} @{insert_edit_into_file} check and fix notes.py")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    diagnostics = provider_server.requests[1].json()["messages"][-1]["content"]
    assert "No diagnostics" in diagnostics
    assert target.read_text() == "alpha = 1\nbeta = 3\n"
    wait_for(lambda: not buffer_state(ed, target)["exists"])
    assert str(target) not in buffer_state(ed, target)["modified"]  # no E37 at :qa


def test_a_file_over_the_load_limit_is_not_loaded_into_neovim(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    target = project / "big.py"
    target.write_text("x = 1\n" * 100)
    provider_server.enqueue(
        openai_tool_calls([("d1", "get_diagnostics", {"filepath": "big.py", "severity": None})]),
        openai_text("ok"),
    )
    extra = 'opts = {"tools": {"get_diagnostics": {"max_load_bytes": 100}}}\n'
    ed = project_nvim(extra)
    ed.nvim.command("CodeCompanionChat")
    ed.send("@{get_diagnostics} check big.py")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    result = provider_server.requests[1].json()["messages"][-1]["content"]
    assert "over the 100-byte limit" in result, result
    assert not buffer_state(ed, target)["exists"]
