"""On real Neovim: approval events once each, `_index` in saved chats, and a reload that
reaches chats already open."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.e2e import ECHO
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def test_approval_events_fire_once_each_and_saved_calls_have_their_index(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    provider_server.enqueue(
        openai_tool_calls(
            [("a", "echo", {"text": "one"}), ("b", "echo", {"text": "two"})], text="Echoing."
        ),
        openai_text("done"),
    )
    ed = start_nvim(config_file=config_file(ECHO.replace("NAME", "echo")))
    ed.open_chat()
    ed.answer("approve", "reject")
    ed.send("@{echo} twice")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    requested = [e for e in ed.events() if e["name"] == "CodeCompanionToolApprovalRequested"]
    finished = [e for e in ed.events() if e["name"] == "CodeCompanionToolApprovalFinished"]
    assert [e["data"]["call_id"] for e in requested] == ["a", "b"]
    assert [e["data"]["name"] for e in requested] == ["echo", "echo"]
    assert [e["data"]["choice"] for e in finished] == ["approve", "reject"]
    assert all(isinstance(e["data"]["bufnr"], int) for e in requested + finished)
    saved = wait_for(lambda: list((tmp_path / "data").rglob("*.json")))
    messages = json.loads(saved[0].read_text())["messages"]
    calls = next(m["tools"]["calls"] for m in messages if "calls" in m.get("tools", {}))
    assert [(c["id"], c["_index"]) for c in calls] == [("a", 0), ("b", 1)]


def test_reload_reaches_an_open_chat(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
) -> None:
    path = config_file("")
    ed = start_nvim(config_file=path)
    bufnr = ed.open_chat()
    # A tool is added and the key fixed while the chat is open.
    path.write_text(path.read_text().replace("sk-test", "sk-fixed") + ECHO.replace("NAME", "added"))
    ed.nvim.command("CodeCompanionReload")
    wait_for(lambda: "open chat" in ed.nvim.command_output("messages"))
    provider_server.enqueue(openai_tool_calls([("c1", "added", {"text": "hi"})]), openai_text("ok"))
    ed.answer("approve")
    ed.nvim.current.buffer = ed.nvim.buffers[bufnr]
    ed.send("@{added} say hi")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    assert provider_server.requests[0].headers["authorization"] == "Bearer sk-fixed"
    first = provider_server.requests[0].json()
    assert [t["function"]["name"] for t in first["tools"]] == ["added"]
    result = provider_server.requests[1].json()["messages"][-1]
    assert result == {"role": "tool", "tool_call_id": "c1", "content": "echo says hi"}
