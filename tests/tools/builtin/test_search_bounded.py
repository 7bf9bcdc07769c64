"""Searches cannot hang: hostile globs and regular expressions match in linear time, FIFOs,
sockets and devices are never opened, and a stopped search ends its worker thread."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from codecompanion.tools.builtin import file_search, grep_search
from tests.support.builtin import FakeTools, run_tool

PYTHON = {"rg_path": False}
HOSTILE_GLOBS = [
    "**?**?**?**?**?**?**?**~",
    "*a*a*a*a*a*a*a*a*a*a*a*b",
    "**/**/**/**/**/**/**/**/**/x",
    "{*a*,*a*,*a*}{*a*,*a*}{*a*,*a*}*b",
    "**/a/**/a/**/a/**/b",
    "**/a/**/a/**/a/**/a/**/a/**/b",
]
HOSTILE_REGEXPS = ["(a|aa)+$", "(a*)*b", "(x+x+)+y", "(.*a){20}z", "^(\\w+\\s?)*$!"]


def deep_tree(root: Path) -> None:
    folder = root / "/".join(["a" * 20] * 8)
    folder.mkdir(parents=True)
    (folder / ("a" * 120 + ".txt")).write_text("a" * 5000 + "\n")
    (root / "plain.txt").write_text("nothing\n")
    steps = root / "/".join(["a"] * 300)  # a path of many short segments
    steps.mkdir(parents=True)
    (steps / "c").write_text("a\n")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("glob", HOSTILE_GLOBS)
async def test_a_hostile_glob_is_matched_in_linear_time(
    tools: FakeTools, project: Path, glob: str
) -> None:
    deep_tree(project)
    out = await run_tool(file_search, {"query": glob, "max_results": None}, tools)
    assert out.status == "success", out.for_llm


@pytest.mark.timeout(60)
@pytest.mark.parametrize("regexp", HOSTILE_REGEXPS)
async def test_a_catastrophic_regexp_in_the_python_search_is_linear(
    tools: FakeTools, project: Path, regexp: str
) -> None:
    deep_tree(project)
    args = {"query": regexp, "is_regexp": True, "include_pattern": None, "max_results": None}
    out = await run_tool(grep_search, args, tools, opts=PYTHON)
    assert out.status == "success", out.for_llm


async def test_a_regexp_the_engine_cannot_run_is_one_clear_error(
    tools: FakeTools, project: Path
) -> None:
    (project / "a.txt").write_text("abc\n")
    args = {"query": "(a)\\1", "is_regexp": True, "include_pattern": None, "max_results": None}
    out = await run_tool(grep_search, args, tools, opts=PYTHON)
    assert out.status == "error"
    assert "Invalid regular expression" in out.for_llm and "Traceback" not in out.for_llm


def special_files(root: Path) -> list[str]:
    """A FIFO, a link to it, a unix socket and a link to a device; their names."""
    os.mkfifo(root / "pipe.txt")
    (root / "pipe-link.txt").symlink_to(root / "pipe.txt")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock.txt"))  # the socket file stays after the close
    (root / "tty.txt").symlink_to("/dev/zero")
    (root / "real.txt").write_text("needle in a real file\n")
    return ["pipe.txt", "pipe-link.txt", "sock.txt", "tty.txt"]


@pytest.mark.timeout(30)
async def test_the_python_search_never_opens_a_fifo_socket_or_device(
    tools: FakeTools, project: Path
) -> None:
    special_files(project)
    args = {"query": "needle", "is_regexp": None, "include_pattern": None, "max_results": None}
    out = await run_tool(grep_search, args, tools, opts=PYTHON)
    assert out.status == "success"
    assert "real.txt:1: needle in a real file" in out.for_llm
    assert "pipe" not in out.for_llm and "tty" not in out.for_llm
    assert not scanning()  # no worker left blocked in open()


def scanning() -> bool:
    """True while some thread runs the Python search's file loop."""
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code is grep_search._scan.__code__:
                return True
            frame = frame.f_back  # type: ignore[assignment]
    return False


def many_files(root: Path, count: int) -> None:
    for index in range(count):
        (root / f"f{index}.txt").write_text(("a" * 100 + "\n") * 5_000)


@pytest.mark.timeout(60)
async def test_a_stopped_python_search_ends_its_worker_thread(
    tools: FakeTools, project: Path
) -> None:
    many_files(project, 400)
    args = {"query": "zzz", "is_regexp": None, "include_pattern": None, "max_results": None}
    task = asyncio.ensure_future(run_tool(grep_search, args, tools, opts=PYTHON))
    while not scanning():
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 5
    while scanning() and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    assert not scanning()


@pytest.mark.timeout(60)
async def test_the_python_search_keeps_to_its_timeout(tools: FakeTools, project: Path) -> None:
    many_files(project, 400)
    args = {"query": "zzz", "is_regexp": None, "include_pattern": None, "max_results": None}
    out = await run_tool(grep_search, args, tools, opts={**PYTHON, "timeout": 0.01})
    assert out.status == "success"
    assert "timed out" in out.for_llm
    assert not scanning()
