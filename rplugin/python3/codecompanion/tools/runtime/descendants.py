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
import uuid

from .child_env import RUN_MARKER

_ROUNDS = 10  # scans per kill: a process that forks while being killed is caught next round


def run_id(host: str) -> str:
    """A new value of the run marker for one run of host `host`."""
    return f"{host}.{uuid.uuid4().hex[:12]}"


def marked(value: str) -> list[int]:
    """Pids of our live processes whose environment has the marker set to `value` (or below)."""
    needle = f"{RUN_MARKER}={value}".encode()
    own = os.getpid()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                variables = handle.read().split(b"\0")
        except OSError:  # gone, or not ours
            continue
        if any(v == needle or v.startswith(needle + b".") for v in variables):
            found.append(int(entry))
    return found


def kill_marked(value: str) -> int:
    """SIGKILL every process carrying the marker `value`, until none is left; how many died."""
    killed = 0
    for _round in range(_ROUNDS):
        pids = marked(value)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed
