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
import threading

from ...priority import share
from .child_env import RUN_MARKER

log = logging.getLogger("codecompanion.tools")

# The watchdog: reads "+pgid"/"-pgid" lines until EOF, then kills what is still registered
# (SIGTERM, up to 1 s for the groups to end, SIGKILL), then every process whose environment
# carries the marker given as $1 (one grep over /proc, up to ten rounds for what forks while it
# dies). A POSIX shell script: the watchdog costs about 1 MB of memory where a Python interpreter
# costs 9. Groups that ended are dropped at each line, so a number the system reuses later is
# not killed. (dash's `kill` takes no `--`: "-$g" is the group.)
WATCHDOG = r"""
groups=""
alive() { kill -0 "-$1" 2>/dev/null; }
while IFS= read -r line; do
  kept=""
  for g in $groups; do
    [ "-$g" = "$line" ] || ! alive "$g" || kept="$kept $g"
  done
  groups=$kept
  case $line in
    +[0-9]*) groups="$groups ${line#+}" ;;
  esac
done
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
tries=0
while [ -n "$groups" ] && [ "$tries" -lt 20 ]; do
  sleep 0.05
  tries=$((tries + 1))
  kept=""
  for g in $groups; do alive "$g" && kept="$kept $g"; done
  groups=$kept
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
[ -n "$1" ] || exit 0
rounds=0
while [ "$rounds" -lt 10 ]; do
  rounds=$((rounds + 1))
  pids=$(grep -lasz -e "^$1\." /proc/[0-9]*/environ 2>/dev/null |
    sed 's|^/proc/\([0-9]*\)/environ$|\1|')
  [ -n "$pids" ] || break
  kill -KILL $pids 2>/dev/null
done
"""


class GroupWatch:
    """The host's side of the watchdog: started on first use, told about each process group."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        # This host's part of the run marker: `CODECOMPANION_TOOL_RUN=<token>.<run>`.
        self.token = f"{os.getpid()}-{os.urandom(4).hex()}"

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
                ["/bin/sh", "-c", WATCHDOG, "codecompanion-watchdog", f"{RUN_MARKER}={self.token}"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.error("cannot start the process watchdog: %s", exc)
            return None
        # Its own session is its own scheduling group: at nice 0 its wake-ups would run ahead
        # of a host that steps below the editor.
        share("self", self._proc.pid)
        return self._proc


@functools.cache
def group_watch() -> GroupWatch:
    """The one watchdog of this process (it guards every tool process the process starts)."""
    return GroupWatch()
