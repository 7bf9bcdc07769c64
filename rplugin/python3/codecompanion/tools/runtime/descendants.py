"""Every process a tool run started, found by a variable they all inherit, and killed.

A process group does not hold a run's processes: a child can call `setsid`, double-fork or
start its own group, and then stop, a timeout, closing the chat or quitting Neovim would leave
it running. Every process a run starts inherits `CODECOMPANION_TOOL_RUN=<host>.<run>` in its
environment, so at the end of the run every process still carrying it is killed. (A process
that rewrites its environment before exec, as `env -i` does, is not marked and not found.)
"""

from __future__ import annotations

import contextlib
import os
import signal

from .child_env import RUN_MARKER

_ROUNDS = 10  # scans per kill: a process that forks while being killed is caught next round
_FEW = 8  # pids handed out since a run began, below which /proc is not listed


def run_id(host: str) -> str:
    """A new value of the run marker for one run of host `host`."""
    return f"{host}.{os.urandom(6).hex()}"


def _entries(since: int | None) -> list[str]:
    """/proc's process entries; only pids from `since` on when pids have not wrapped since.

    A run's processes are all started after its first one, so (pids counting up) none has a
    number below it: a finished command's check reads a few entries, not every process's.
    When only a few pids were handed out since, those numbers are tried without listing /proc.
    """
    last = _last_pid() if since is not None else None
    if since is not None and last is not None and 0 <= last - since < _FEW:
        return [str(pid) for pid in range(since, last + 1)]
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []
    if since is None or last is None or last < since:  # unknown, or the numbers wrapped around
        return entries
    return [entry for entry in entries if since <= int(entry) <= last]


def _last_pid() -> int | None:
    """The pid the system handed out last (None where /proc does not tell)."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def marked(value: str, since: int | None = None) -> list[int]:
    """Pids of our live processes whose environment has the marker set to `value` (or below).

    `since`: the pid of the run's first process (its descendants have higher numbers).
    """
    needle = f"{RUN_MARKER}={value}".encode()
    own = os.getpid()
    found: list[int] = []
    for entry in _entries(since):
        if int(entry) == own:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                data = handle.read()
        except OSError:  # gone, or not ours
            continue
        if needle in data and any(
            v == needle or v.startswith(needle + b".") for v in data.split(b"\0")
        ):
            found.append(int(entry))
    return found


def kill_marked(value: str, since: int | None = None) -> int:
    """SIGKILL every process carrying the marker `value`, until none is left; how many died.

    `since`: see `marked`.
    """
    killed = 0
    for _round in range(_ROUNDS):
        pids = marked(value, since)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed
