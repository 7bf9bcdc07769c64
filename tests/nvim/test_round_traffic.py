"""What a tool round sends into Neovim: no follow calls while follow mode is off (a round of
reads was one call per read), one per read once `:CodeCompanionChat Follow` turns it on; and
its batches carry one spinner op and one status per call, each event still once, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text, openai_tool_calls
from tests.support.nvim import ProjectNvim

WATCH = """
local editor, render = require("codecompanion.editor"), require("codecompanion.render")
local follow, apply = editor.follow, render.apply
_G.TRAFFIC = { follows = 0, batches = {} }
editor.follow = function(...)
  _G.TRAFFIC.follows = _G.TRAFFIC.follows + 1
  return follow(...)
end
render.apply = function(bufnr, ops)
  table.insert(_G.TRAFFIC.batches, ops)
  return apply(bufnr, ops)
end
"""


def reads(count: int) -> Turn:
    """One answer reading f0.py … f<count-1>.py."""
    return openai_tool_calls(
        [
            (
                f"r{n}",
                "read_file",
                {
                    "filepath": f"f{n}.py",
                    "start_line_number_base_zero": 0,
                    "end_line_number_base_zero": -1,
                },
            )
            for n in range(count)
        ]
    )


def traffic(ed: Any) -> dict[str, Any]:
    return dict(ed.lua("return _G.TRAFFIC"))


def test_a_read_round_calls_follow_only_in_follow_mode_and_batches_carry_last_states(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    for n in range(4):
        (project / f"f{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    provider_server.enqueue(reads(4), openai_text("read"), reads(4), openai_text("again"))
    ed = project_nvim("")
    ed.lua(WATCH)
    ed.open_chat()
    ed.send("@{read_file} read the four files")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    seen = traffic(ed)
    assert seen["follows"] == 0
    events: list[str] = []
    for batch in seen["batches"]:
        assert sum(op["kind"] == "spinner" for op in batch) <= 1
        statuses = [op["call_id"] for op in batch if op["kind"] == "tool_status"]
        assert len(statuses) == len(set(statuses))
        names = [op["name"] for op in batch if op["kind"] == "event"]
        events += [name for name in names if name.startswith("Tool")]
    assert events == ["ToolsStarted", *["ToolStarted"] * 4, *["ToolFinished"] * 4, "ToolsFinished"]
    results = [m for m in provider_server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert [("return 3" in m["content"]) for m in results] == [False, False, False, True]

    ed.nvim.command("CodeCompanionChat Follow")
    ed.send("@{read_file} read them again")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=30)
    assert traffic(ed)["follows"] == 4
