"""The manager against real servers: mcp-server-time and mcp-server-fetch (stdio, from PyPI) and
an SDK-built streamable HTTP server. Starts, calls, errors, crashes, restarts and shutdown."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codecompanion.adapters.keys import KeyResolver
from codecompanion.mcp import McpError, McpManager
from codecompanion.mcp.tools import make_tool
from tests.support.http_serve import serve
from tests.support.mcp_servers import FETCH_CMD, TIME_CMD, TOKEN, HttpServer, start_http_server
from tests.support.procs import children


def manager(
    servers: dict[str, object], tmp_path: Path, env: dict[str, str] | None = None
) -> McpManager:
    made = McpManager(servers, keys=KeyResolver(env or {}), log_dir=tmp_path / "logs")
    made.notify = lambda line: lines.append(line)
    return made


lines: list[str] = []


@pytest.fixture(autouse=True)
def _clear_lines() -> None:
    lines.clear()


async def test_time_server_lists_and_calls_tools(tmp_path: Path) -> None:
    mcp = manager({"time": {"cmd": TIME_CMD}}, tmp_path)
    try:
        config, infos = await mcp.tool_infos("time")
        assert sorted(info.name for info in infos) == ["convert_time", "get_current_time"]
        tool = make_tool(mcp, config, next(i for i in infos if i.name == "get_current_time"))
        assert tool.name == "time_get_current_time"
        assert tool.opts["requires_approval"] is True
        assert "title" not in json.dumps(tool.parameters)
        outcome = await mcp.call("time", "get_current_time", {"timezone": "UTC"})
        assert not outcome.is_error and json.loads(outcome.text)["timezone"] == "UTC"
        bad = await mcp.call("time", "get_current_time", {"timezone": "Nowhere/Bad"})
        assert bad.is_error and "Nowhere/Bad" in bad.text
        unknown = await mcp.call("time", "no_such_tool", {})
        assert unknown.is_error and "no_such_tool" in unknown.text
        assert mcp.status()[0] | {"error": None} == {
            "name": "time",
            "transport": "stdio",
            "state": "running",
            "tools": 2,
            "error": None,
        }
    finally:
        await mcp.aclose()
    assert children("mcp_server_time") == []


@pytest.fixture
def page_server() -> Iterator[str]:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = (
                b"<html><body><h1>Loopback title</h1><p>Some <b>bold</b> words.</p></body></html>"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serve(Page) as url:
        yield f"{url}page"


async def test_fetch_server_fetches_a_loopback_page(tmp_path: Path, page_server: str) -> None:
    mcp = manager({"fetch": {"cmd": FETCH_CMD}}, tmp_path)
    try:
        config, infos = await mcp.tool_infos("fetch")
        assert [info.name for info in infos] == ["fetch"]
        assert make_tool(mcp, config, infos[0]).name == "fetch_fetch"
        outcome = await mcp.call("fetch", "fetch", {"url": page_server})
        assert not outcome.is_error, outcome.text
        assert "Loopback title" in outcome.text and "**bold**" in outcome.text
    finally:
        await mcp.aclose()


async def test_http_server_with_headers_from_env(tmp_path: Path, http_server: HttpServer) -> None:
    servers = {"web": {"url": http_server.url, "headers": {"Authorization": "env:WEB_TOKEN"}}}
    mcp = manager(servers, tmp_path, {"WEB_TOKEN": f"Bearer {TOKEN}"})
    try:
        _config, infos = await mcp.tool_infos("web")
        assert {info.name for info in infos} >= {"add", "fail", "picture"}
        assert (await mcp.call("web", "add", {"a": 2, "b": 3})).text == "5"
        failed = await mcp.call("web", "fail", {"message": "boom"})
        assert failed.is_error and "boom" in failed.text
        picture = await mcp.call("web", "picture", {})
        assert picture.text.splitlines()[0] == "a red square"
        assert "[image (image/png" in picture.text and "[resource file:///notes.txt" in picture.text
        assert mcp.status()[0]["transport"] == "http"
    finally:
        await mcp.aclose()


async def test_wrong_header_fails_to_start_with_one_line(
    tmp_path: Path, http_server: HttpServer
) -> None:
    mcp = manager(
        {
            "web": {"url": http_server.url, "headers": {"Authorization": "Bearer no"}},
            "nope": {"cmd": ["/nonexistent/mcp-server"]},
            "unset": {"url": http_server.url, "headers": {"A": "env:UNSET_VAR"}},
        },
        tmp_path,
    )
    try:
        with pytest.raises(McpError) as caught:
            await mcp.tool_infos("web")
        assert "MCP server web failed to start" in str(caught.value)
        assert "\n" not in str(caught.value)
        with pytest.raises(McpError, match="nope failed to start"):
            await mcp.tool_infos("nope")
        with pytest.raises(McpError, match="UNSET_VAR"):
            await mcp.tool_infos("unset")
        assert {row["state"] for row in mcp.status()} == {"failed"}
    finally:
        await mcp.aclose()


async def test_http_crash_mid_call_is_an_error_then_restarts(
    tmp_path: Path, http_server: HttpServer
) -> None:
    servers = {"web": {"url": http_server.url, "headers": {"Authorization": f"Bearer {TOKEN}"}}}
    mcp = manager(servers, tmp_path)
    try:
        await mcp.tool_infos("web")
        with pytest.raises(McpError, match="went away during the call"):
            await asyncio.wait_for(mcp.call("web", "crash", {}), 30)
        http_server.process.wait()
        http_server.process = start_http_server(http_server.port)
        assert (await mcp.call("web", "add", {"a": 1, "b": 1})).text == "2"
        assert lines == ["MCP server web stopped unexpectedly; restarting it"]
    finally:
        await mcp.aclose()


async def test_stdio_server_killed_while_idle_restarts_on_next_use(tmp_path: Path) -> None:
    mcp = manager({"time": {"cmd": TIME_CMD}}, tmp_path)
    try:
        await mcp.tool_infos("time")
        (pid,) = children("mcp_server_time")
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            if mcp.status()[0]["state"] == "crashed":
                break
            await asyncio.sleep(0.05)
        assert mcp.status()[0]["state"] == "crashed"
        outcome = await mcp.call("time", "get_current_time", {"timezone": "UTC"})
        assert not outcome.is_error
        assert lines == ["MCP server time stopped unexpectedly; restarting it"]
        assert len(children("mcp_server_time")) == 1
    finally:
        await mcp.aclose()
    assert children("mcp_server_time") == []


async def test_a_server_function_is_called_once_when_first_needed(tmp_path: Path) -> None:
    calls: list[int] = []

    def server() -> dict[str, object]:
        calls.append(1)
        return {"cmd": TIME_CMD, "requires_approval": False}

    mcp = manager({"time": server}, tmp_path)
    assert calls == [] and mcp.status()[0]["transport"] == "function (not called yet)"
    try:
        first, second = await asyncio.gather(mcp.tool_infos("time"), mcp.tool_infos("time"))
        assert first[0] is second[0] and calls == [1]
        assert first[0].requires_approval is False
        assert len(children("mcp_server_time")) == 1
    finally:
        await mcp.aclose()


async def test_stderr_goes_to_the_log_file_not_the_screen(tmp_path: Path) -> None:
    mcp = manager({"time": {"cmd": TIME_CMD}}, tmp_path)
    try:
        await mcp.call("time", "get_current_time", {"timezone": "Nowhere/Bad"})
    finally:
        await mcp.aclose()
    assert (tmp_path / "logs" / "mcp-time.log").exists()


async def test_a_server_that_dies_at_start_says_why_from_its_stderr(tmp_path: Path) -> None:
    # A missing server package: the SDK only sees the pipe close; the cause is on stderr.
    mcp = manager({"gone": {"cmd": [sys.executable, "-m", "no_such_mcp_server_pkg"]}}, tmp_path)
    try:
        with pytest.raises(McpError) as caught:
            await mcp.tool_infos("gone")
        text = str(caught.value)
        assert text.startswith("MCP server gone failed to start: ")
        assert "No module named no_such_mcp_server_pkg" in text and "\n" not in text
        assert "Connection closed" not in text
        assert mcp.status()[0]["error"].endswith("No module named no_such_mcp_server_pkg")
    finally:
        await mcp.aclose()
