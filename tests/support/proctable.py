"""The process table from /proc: find a tool's processes by a marker and watch them go."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Proc:
    """One live (non-zombie) process."""

    pid: int
    ppid: int
    pgid: int
    cmdline: str


def processes() -> list[Proc]:
    """Every live process we can read."""
    found: list[Proc] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] in ("Z", "X"):
            continue
        found.append(Proc(int(entry), int(fields[1]), int(fields[2]), cmdline))
    return found


def with_marker(marker: str) -> list[Proc]:
    """Processes whose command line contains `marker`."""
    return [p for p in processes() if marker in p.cmdline]


def members(pgids: set[int]) -> list[Proc]:
    """Live processes in any of the process groups."""
    return [p for p in processes() if p.pgid in pgids]


def wait_until_gone(pgids: set[int], timeout: float = 5.0) -> list[Proc]:
    """Wait for the groups to empty; returns what is still alive at the deadline."""
    deadline = time.monotonic() + timeout
    alive = members(pgids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = members(pgids)
    return alive


def kill_groups(pgids: set[int]) -> None:
    """Clean up after a failing test: SIGKILL what is left of the groups."""
    import signal

    for pgid in pgids:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


def read_pgid(folder: Path) -> int:
    """The process group a test script wrote to `folder/pgid` (`echo $$ > pgid`)."""
    return int((folder / "pgid").read_text().strip())


async def wait_for_file(path: Path) -> None:
    """Wait (2 s at most) until a script has written something to `path`."""
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")
