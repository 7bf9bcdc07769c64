"""MCP servers' tools through the real tool system: `@{mcp:<server>}`, approval by default and
per tool, one result per call whatever the server does, and the config file's `mcp` setting."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codecompanion.adapters.keys import KeyResolver
from codecompanion.config import load_config
from codecompanion.mcp import McpManager
from codecompanion.mcp.tools import register_servers
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from codecompanion.workspace import HostOptions, Workspace
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.mcp_servers import TIME_CMD, TOKEN, HttpServer
from tests.support.tools import builtin_system, call


def system_for(
    servers: dict[str, object], tmp_path: Path, approver: ScriptedApprover
) -> tuple[ToolSystem, RecordingChat, McpManager]:
    manager = McpManager(servers, keys=KeyResolver({}), log_dir=tmp_path)
    registry = ToolRegistry({}, {})
    register_servers(manager, registry)
    system, chat = builtin_system(tmp_path, registry=registry, approver=approver)
    return system, chat, manager


async def test_mention_offers_the_servers_tools_after_prepare(tmp_path: Path) -> None:
    approver = ScriptedApprover("approve")
    system, chat, manager = system_for({"time": {"cmd": TIME_CMD}}, tmp_path, approver)
    try:
        items = system.registry.completion_items()
        assert {"word": "@{mcp:time}", "kind": "group", "menu": "MCP server time (stdio)"} in items
        text = system.parse_user_message("What time is it? @{mcp:time}")
        assert text == "What time is it? the tools of the time MCP server"
        assert system.schemas() == []  # not started yet: nothing started at mention time
        assert await system.prepare() == []
        names = [schema["function"]["name"] for schema in system.schemas()]
        assert names == ["time_get_current_time", "time_convert_time"]  # the server's order
        first = call("time_get_current_time", {"timezone": "UTC"})
        await system.run([first])
        assert len(approver.requests) == 1
        assert approver.prompts[0].startswith("Run the time_get_current_time tool?")
        assert (
            not chat.result(first.id).is_error
            and '"timezone": "UTC"' in chat.result(first.id).for_llm
        )
        bad = call("time_get_current_time", {"timezone": "Nowhere/Bad"})
        await system.run([bad])
        assert chat.result(bad.id).is_error and "Nowhere/Bad" in chat.result(bad.id).for_llm
    finally:
        await manager.aclose()


async def test_rejected_calls_never_reach_the_server_and_per_tool_approval(tmp_path: Path) -> None:
    servers = {
        "time": {
            "cmd": TIME_CMD,
            "tools": {"get_current_time": {"requires_approval": False}, "convert_time": {}},
        }
    }
    approver = ScriptedApprover("reject")
    system, chat, manager = system_for(servers, tmp_path, approver)
    try:
        system.add_group("mcp:time")
        await system.prepare()
        free = call("time_get_current_time", {"timezone": "UTC"})
        asked = call(
            "time_convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        await system.run([free, asked])
        assert len(approver.requests) == 1 and "time_convert_time" in approver.prompts[0]
        assert not chat.result(free.id).is_error
        assert chat.final_status(asked.id) == "rejected"
    finally:
        await manager.aclose()


async def test_a_server_that_cannot_start_is_one_line_and_no_tools(tmp_path: Path) -> None:
    system, _chat, manager = system_for(
        {"gone": {"cmd": ["/nonexistent/server"]}}, tmp_path, ScriptedApprover()
    )
    system.parse_user_message("@{mcp:gone} hi")
    problems = await system.prepare()
    assert len(problems) == 1 and problems[0].startswith("MCP server gone failed to start")
    assert system.schemas() == []
    await manager.aclose()


async def test_crash_during_a_batch_gives_each_call_one_result(
    tmp_path: Path, http_server: HttpServer
) -> None:
    servers = {
        "web": {
            "url": http_server.url,
            "headers": {"Authorization": f"Bearer {TOKEN}"},
            "requires_approval": False,
        }
    }
    system, chat, manager = system_for(servers, tmp_path, ScriptedApprover())
    try:
        system.add_group("mcp:web")
        await system.prepare()
        calls = [call("web_add", {"a": 1, "b": 2}), call("web_crash"), call("web_add", {"a": 1})]
        await asyncio.wait_for(system.run(calls), 60)
        assert [len([r for r in chat.results if r.call.id == c.id]) for c in calls] == [1, 1, 1]
        assert chat.result(calls[0].id).for_llm == "3"
        assert "went away during the call" in chat.result(calls[1].id).for_llm
        assert chat.result(calls[2].id).is_error
    finally:
        await manager.aclose()


def test_the_config_file_mcp_setting_reaches_the_registry(tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "import sys\n"
        "def later():\n"
        "    raise RuntimeError('called too early')\n"
        "mcp = {'servers': {\n"
        "    'time': {'cmd': [sys.executable, '-m', 'mcp_server_time']},\n"
        "    'later': later,\n"
        "    'bad': {'url': 'nope'},\n"
        "}}\n"
    )
    assert "server bad" in (load_config(config).error or "")
    workspace = Workspace(HostOptions(config_file=str(config), data_dir=str(tmp_path)))
    assert workspace.mcp is not None
    assert workspace.registry.group_names() == ["agent", "files", "mcp:later", "mcp:time"]
    rows = {row["name"]: row for row in workspace.mcp.status()}
    assert rows["time"]["state"] == "not started"
    assert rows["later"]["transport"] == "function (not called yet)"
    workspace.close()
    empty = Workspace(HostOptions(data_dir=str(tmp_path)))
    assert empty.mcp is None and "mcp:time" not in empty.registry.group_names()


LAZY_PROBE = """
import sys
from codecompanion.workspace import HostOptions, Workspace
ws = Workspace(HostOptions(config_file=sys.argv[1], data_dir=sys.argv[2]), env={})
ws.registry.completion_items()
print(sorted(m for m in ("mcp", "mcp_types", "httpx2") if m in sys.modules))
"""


def test_the_sdk_is_imported_only_when_a_server_starts(tmp_path: Path) -> None:
    import subprocess
    import sys

    with_servers = tmp_path / "with.py"
    with_servers.write_text("mcp = {'servers': {'time': {'cmd': ['python', '-m', 'x']}}}\n")
    for config in (tmp_path / "none.py", with_servers):
        done = subprocess.run(
            [sys.executable, "-c", LAZY_PROBE, str(config), str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stdout.strip() == "[]", done.stderr


async def test_reload_stops_the_servers_and_cmd_values_are_resolved(
    tmp_path: Path, http_server: HttpServer, caplog: object
) -> None:
    from tests.support.procs import children

    config = tmp_path / "codecompanion.py"
    config.write_text(
        f"mcp = {{'servers': {{'time': {{'cmd': {TIME_CMD!r}}},\n"
        f"    'web': {{'url': {http_server.url!r},\n"
        f"             'headers': {{'Authorization': 'cmd:printf \"Bearer {TOKEN}\"'}}}}}}}}\n"
    )
    workspace = Workspace(HostOptions(config_file=str(config), data_dir=str(tmp_path)), env={})
    assert await workspace.registry.load_group("mcp:time") == [
        "time_get_current_time",
        "time_convert_time",
    ]
    assert "web_add" in await workspace.registry.load_group("mcp:web")
    assert len(children("mcp_server_time")) == 1
    old = workspace.mcp
    assert workspace.reload() is None
    assert old is not None and old.closing is not None
    await asyncio.wait_for(old.closing, 30)
    assert children("mcp_server_time") == []
    assert {row["state"] for row in old.status()} == {"stopped"}
    assert workspace.mcp is not None and workspace.mcp.status()[0]["state"] == "not started"
    assert TOKEN not in str(getattr(caplog, "text", ""))
    workspace.close()
