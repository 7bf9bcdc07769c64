"""MCP servers end to end on real Neovim: the reference time server (stdio, from PyPI) and an
SDK-built streamable HTTP server, asked for approval, one result each, listed by :checkhealth,
and stopped when Neovim quits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.mcp_servers import TOKEN, HttpServer, free_port, start_http_server
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


@pytest.fixture
def web_server() -> Iterator[HttpServer]:
    port = free_port()
    server = HttpServer(f"http://127.0.0.1:{port}/mcp", start_http_server(port), port)
    try:
        yield server
    finally:
        server.process.kill()
        server.process.wait()


def processes_with(marker: str) -> list[str]:
    """Command lines of live processes whose arguments contain `marker`."""
    out = subprocess.run(
        ["ps", "-A", "-ww", "-o", "stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if marker in line and not line.startswith("Z")]


def test_mcp_tools_run_with_approval_and_servers_stop_on_quit(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    web_server: HttpServer,
) -> None:
    marker = f"mcp-e2e-{uuid.uuid4().hex}"
    # The marker rides on the time server's command line so this test finds its process.
    launch = "import sys, mcp_server_time; sys.argv = ['mcp-server-time']; mcp_server_time.main()"
    servers = {
        "time": {"cmd": [sys.executable, "-c", launch, marker], "env": {"TZ": "UTC"}},
        "web": {"url": web_server.url, "headers": {"Authorization": "env:WEB_TOKEN"}},
    }
    provider_server.enqueue(
        openai_tool_calls(
            [
                ("t1", "time_get_current_time", {"timezone": "UTC"}),
                ("w1", "web_add", {"a": 2, "b": 3}),
            ]
        ),
        openai_text("It is late and 2+3=5."),
    )
    ed = start_nvim(
        config_file=config_file(f"mcp = {{'servers': {json.dumps(servers)}}}\n"),
        env={"WEB_TOKEN": f"Bearer {TOKEN}"},
    )
    bufnr = ed.open_chat()
    # Completion answers from the cache the host fills when it starts (it never waits on it).
    wait_for(lambda: ed.lua("return #require('codecompanion.complete').omnifunc(0, '@{mcp:')") > 0)
    start = ed.lua(
        "vim.api.nvim_set_current_line('see @{mcp:ti'); vim.cmd('normal! $');"
        "vim.api.nvim_win_set_cursor(0, {vim.fn.line('.'), #vim.fn.getline('.')});"
        "local cc = require('codecompanion.complete');"
        "return {cc.omnifunc(1, ''), cc.omnifunc(0, '@{mcp:ti')}"
    )
    assert start[0] == 4
    assert start[1] == [{"word": "@{mcp:time}", "kind": "group", "menu": "MCP server time (stdio)"}]
    ed.nvim.current.line = ""
    ed.answer("approve", "approve")
    ed.send("@{mcp:time} @{mcp:web} what time is it, and 2+3?")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    first = provider_server.requests[0].json()
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert {"time_get_current_time", "time_convert_time", "web_add", "web_fail"} <= set(names)
    assert first["messages"][-1]["content"].startswith(
        "the tools of the time MCP server the tools of the web MCP server"
    )
    prompts = [p["prompt"] for p in ed.prompts()]
    assert any("time_get_current_time" in p for p in prompts)
    assert any("web_add" in p for p in prompts)
    results = [m for m in provider_server.requests[1].json()["messages"] if m["role"] == "tool"]
    by_id = {m["tool_call_id"]: m["content"] for m in results}
    assert set(by_id) == {"t1", "w1"} and len(results) == 2
    assert json.loads(by_id["t1"])["timezone"] == "UTC" and by_id["w1"] == "5"
    assert "2+3=5" in ed.text(bufnr)
    assert len(processes_with(marker)) == 1

    ed.nvim.command("checkhealth codecompanion")
    health = "\n".join(ed.nvim.current.buffer[:])
    assert "time (stdio): running, 2 tools" in health
    assert "web (http): running" in health
    assert TOKEN not in health

    try:
        ed.nvim.command("qa!")
    except Exception:  # the channel closes as Neovim exits
        pass
    deadline = time.monotonic() + 20
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == []


def test_a_30_mb_mcp_answer_reaches_the_chat_cut_and_neovim_stays_responsive(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    # The SDK-built server answers one 60 MB line (text + structured copy); the host reads it
    # off its event loop and hands on at most a million characters, in the chat and the request.
    garbling = str(Path(__file__).parents[1] / "mcp" / "garbling_server.py")
    servers = {"g": {"cmd": [sys.executable, garbling], "timeout": 300}}
    provider_server.enqueue(
        openai_tool_calls([("b1", "g_big", {"megabytes": 30})]), openai_text("It was long.")
    )
    ed = start_nvim(config_file=config_file(f"mcp = {{'servers': {json.dumps(servers)}}}\n"))
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("@{mcp:g} say something long")
    worst = 0.0
    deadline = time.monotonic() + 240
    while len(provider_server.requests) < 2 and time.monotonic() < deadline:
        started = time.monotonic()
        ed.nvim.eval("1")  # Neovim answers while the host reads the answer
        worst = max(worst, time.monotonic() - started)
        time.sleep(0.02)
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    assert worst < 0.5, worst
    results = [m for m in provider_server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and results[0]["tool_call_id"] == "b1"
    sent = results[0]["content"]
    assert sent.startswith("x" * 1000) and sent.endswith("more characters of the answer cut]")
    assert len(sent) <= 1_000_100
    assert "It was long." in ed.text(bufnr)
