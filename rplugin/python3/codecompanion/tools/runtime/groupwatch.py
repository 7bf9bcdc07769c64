"""Tool processes die with the host: a watchdog kills their process groups when we go away.

Tool commands run in their own process groups, so a stop or a timeout can kill a command with
every child it started. When the host itself dies (SIGKILL, a crash, Neovim quitting before the
loop could clean up), nobody would kill them. `PR_SET_PDEATHSIG` only reaches the direct child,
not what a shell starts in the background, so instead one small watchdog process per host holds
the read end of a pipe: the host registers each group it starts, and when the pipe reaches EOF,
which the kernel guarantees however the host ends, the watchdog kills every registered group,
and every process whose environment carries this host's run marker (see descendants.py): those
that left their group with `setsid` or a double fork.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import threading
import uuid

from .child_env import RUN_MARKER

log = logging.getLogger("codecompanion.tools")

# The watchdog: reads "+pgid"/"-pgid" lines until EOF, then kills what is still registered.
# Standard library only, run with -I -S so it starts fast and nothing from the project loads.
WATCHDOG = r"""
import os, select, signal, sys, time

def alive(group):
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

def signal_all(groups, sig):
    for group in groups:
        try:
            os.killpg(group, sig)
        except OSError:
            pass

def marked(needle):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/" + entry + "/environ", "rb") as handle:
                variables = handle.read().split(b"\0")
        except OSError:
            continue
        if any(v.startswith(needle) for v in variables):
            found.append(int(entry))
    return found

def kill_marked(needle):
    for _ in range(10):
        pids = marked(needle)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not pids:
            return

groups, pending, source = set(), b"", sys.stdin.fileno()
while True:
    ready, _, _ = select.select([source], [], [], 5.0)
    if not ready:
        groups = {g for g in groups if alive(g)}
        continue
    data = os.read(source, 4096)
    if not data:
        break
    *lines, pending = (pending + data).split(b"\n")
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
signal_all(groups, signal.SIGTERM)
deadline = time.monotonic() + 1.0
while groups and time.monotonic() < deadline:
    time.sleep(0.05)
    groups = {g for g in groups if alive(g)}
signal_all(groups, signal.SIGKILL)
kill_marked(sys.argv[1].encode() + b".")
"""


class GroupWatch:
    """The host's side of the watchdog: started on first use, told about each process group."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        # This host's part of the run marker: `CODECOMPANION_TOOL_RUN=<token>.<run>`.
        self.token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def start(self) -> None:
        """Start the watchdog now, before any tool runs (the host calls this at start-up)."""
        with self._lock:
            if self._proc is None:
                self._start()

    def add(self, pgid: int) -> None:
        """Kill group `pgid` if this process dies before `remove(pgid)`."""
        self._send(f"+{pgid}\n")

    def remove(self, pgid: int) -> None:
        """Group `pgid` is gone (or no longer ours to kill)."""
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._proc if self._proc is not None else self._start()
            if proc is None or proc.stdin is None:
                return
            try:
                os.write(proc.stdin.fileno(), line.encode())
            except OSError as exc:
                log.warning("process watchdog is gone (%s); starting a new one", exc)
                self._proc = None

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            # The pipe's write end is not inheritable (PEP 446), so only we keep it open.
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", WATCHDOG, f"{RUN_MARKER}={self.token}"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.error("cannot start the process watchdog: %s", exc)
            return None
        return self._proc


@functools.cache
def group_watch() -> GroupWatch:
    """The one watchdog of this process (it guards every tool process the process starts)."""
    return GroupWatch()
