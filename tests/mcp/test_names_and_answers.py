"""MCP tools never replace another tool, and a server's unreadable or huge answers end
promptly, huge ones read in bounded memory: against a real SDK-built stdio server
(tests/mcp/garbling_server.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tracemalloc
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from codecompanion.adapters.keys import KeyResolver
from codecompanion.mcp import McpManager
from codecompanion.mcp.config import parse_server
from codecompanion.mcp.session import Connection
from codecompanion.mcp.tools import register_servers
from codecompanion.tools import tool_registry
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.tools import builtin_system, call

SERVER = str(Path(__file__).with_name("garbling_server.py"))
MAX_RESULT_CHARS = 1_000_000  # mcp.session.MAX_RESULT_CHARS
T = TypeVar("T")


def server(*args: str, timeout: float = 30) -> dict[str, object]:
    return {"cmd": [sys.executable, SERVER, *args], "timeout": timeout}


def system_for(
    servers: dict[str, object], tmp_path: Path, builtins: bool = False
) -> tuple[ToolSystem, RecordingChat, McpManager]:
    manager = McpManager(servers, keys=KeyResolver({}), log_dir=tmp_path)
    registry = tool_registry() if builtins else ToolRegistry({}, {})
    register_servers(manager, registry)
    approver = ScriptedApprover(default="approve")
    offer = [f"mcp:{name}" for name in servers]
    system, chat = builtin_system(tmp_path, *offer, registry=registry, approver=approver)
    return system, chat, manager


async def test_server_tools_never_replace_a_builtin_or_each_other(tmp_path: Path) -> None:
    servers = {
        "read": server("--tool", "file"),  # read + file = read_file, a builtin
        "a": server("--tool", "b_c"),
        "a_b": server("--tool", "c"),  # a_b + c = a + b_c
    }
    system, chat, manager = system_for(servers, tmp_path, builtins=True)
    try:
        problems = await system.prepare()
        assert any("read_file" in p and "offered as read_file_2" in p for p in problems), problems
        assert any("offered as a_b_c_2" in p for p in problems), problems
        builtin = system.registry.get("read_file")
        assert builtin is not None and "mcp_server" not in builtin.opts
        renamed = system.registry.get("read_file_2")
        assert renamed is not None and renamed.opts.get("mcp_server") == "read"
        names = [s["function"]["name"] for s in system.schemas()]
        assert len(names) == len(set(names)) and {"read_file_2", "a_b_c", "a_b_c_2"} <= set(names)
        first, second = call("a_b_c", {}), call("a_b_c_2", {})
        await system.run([first, second])
        served = {chat.result(first.id).for_llm, chat.result(second.id).for_llm}
        assert served == {"served by b_c", "served by c"}
    finally:
        await manager.aclose()


async def test_an_unreadable_answer_ends_the_call_promptly(tmp_path: Path) -> None:
    system, chat, manager = system_for({"g": server(timeout=60)}, tmp_path)
    try:
        assert await system.prepare() == []
        garbled = call("g_echo", {"text": "GARBLE_ME_HERE"})
        started = time.monotonic()
        await system.run([garbled])
        took = time.monotonic() - started
        result = chat.result(garbled.id)
        assert result.is_error and "cannot be read" in result.for_llm, result.for_llm
        assert took < 15, took  # not the 60 s timeout
        fine = call("g_echo", {"text": "still works"})
        await system.run([fine])
        assert chat.result(fine.id).for_llm == "still works"
    finally:
        await manager.aclose()


async def test_an_unreadable_tool_list_fails_the_start_promptly(tmp_path: Path) -> None:
    system, _chat, manager = system_for({"g": server("--list", timeout=60)}, tmp_path)
    try:
        started = time.monotonic()
        problems = await system.prepare()
        took = time.monotonic() - started
        assert len(problems) == 1 and "cannot be read" in problems[0], problems
        assert took < 15, took  # not the 30 s start timeout
    finally:
        await manager.aclose()


async def test_a_huge_answer_is_cut(tmp_path: Path) -> None:
    system, chat, manager = system_for({"g": server()}, tmp_path)
    try:
        outcome = await manager.call("g", "big", {"megabytes": 6})
        assert len(outcome.text) <= MAX_RESULT_CHARS + 100
        assert outcome.text.endswith("more characters of the answer cut]")
        huge = call("g_big", {"megabytes": 6})
        assert await system.prepare() == []
        await system.run([huge])
        assert not chat.result(huge.id).is_error
    finally:
        await manager.aclose()


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose arguments hold `marker`."""
    out = subprocess.run(["ps", "-A", "-ww", "-o", "pid=,stat=,args="], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    rows = [line.split(None, 2) for line in out.splitlines()]
    return [int(r[0]) for r in rows if len(r) == 3 and marker in r[2] and r[1][0] != "Z"]


async def test_a_process_the_server_left_in_its_own_session_ends_with_it(tmp_path: Path) -> None:
    tag = f"mcp-left-{uuid.uuid4().hex}"
    _system, _chat, manager = system_for({"g": server()}, tmp_path)
    try:
        outcome = await manager.call("g", "spawn", {"tag": tag})
        assert outcome.text == "spawned" and processes_with(tag)
    finally:
        await manager.aclose()
    deadline = time.monotonic() + 10
    while processes_with(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_with(tag)
    for pid in left:  # never leave it behind, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert left == []


async def peak_allocated_during(work: Coroutine[Any, Any, T]) -> tuple[T, int]:
    """`work`'s value and the most bytes Python held allocated (beyond the start) while it ran."""
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        value = await work
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak - start


async def test_a_30_mb_answer_is_read_in_bounded_memory_and_cut(tmp_path: Path) -> None:
    # The server sends one 60 MB line (text + structured copy); the host parses at most a few
    # MB of it (the rest is read and cut in a process of its own).
    _system, _chat, manager = system_for({"g": server(timeout=300)}, tmp_path)
    try:
        await manager.call("g", "echo", {"text": "started"})
        outcome, peak = await peak_allocated_during(manager.call("g", "big", {"megabytes": 30}))
        assert peak < 15_000_000, peak  # the SDK's reader held 30 MB+ several times over
        assert not outcome.is_error, outcome.text[:200]
        assert outcome.text.startswith("x" * 1000)
        assert outcome.text.endswith("more characters of the answer cut]")
        assert len(outcome.text) <= MAX_RESULT_CHARS
        after = await manager.call("g", "echo", {"text": "still works"})
        assert after.text == "still works"
    finally:
        await manager.aclose()


async def test_a_message_over_the_cap_is_one_error_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    config = parse_server("g", server(timeout=300))
    connection = Connection(config, {}, {}, errlog=None, max_message_bytes=3_000_000)
    try:
        await connection.start()
        started = time.monotonic()
        outcome = await connection.call("big", {"megabytes": 5}, 300)
        assert outcome.is_error and "\n" not in outcome.text, outcome.text
        assert "over the 3 MB limit" in outcome.text, outcome.text
        assert time.monotonic() - started < 60  # not the call's timeout
        fine = await connection.call("echo", {"text": "still works"}, 60)
        assert (fine.text, fine.is_error) == ("still works", False)
    finally:
        await connection.stop()
