"""Running a program in a session of its own at a given autogroup nice (Linux)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Python source: a new session, its autogroup at nice argv[1], then exec argv[2:]. An
# unprivileged change is refused (EAGAIN) for 100 ms after anyone's, so it is retried.
_SESSION = """
import errno, os, sys, time
os.setsid()
for _ in range(100):
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(sys.argv[1])
        break
    except OSError as exc:
        if exc.errno != errno.EAGAIN:
            raise
        time.sleep(0.05)
os.execv(sys.argv[2], sys.argv[2:])
"""


def at_nice(nice: int, argv: list[str]) -> list[str]:
    """`argv` run in a new session whose autogroup is at `nice` (skips without autogroups)."""
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("no autogroup scheduling on this kernel")
    return [sys.executable, "-c", _SESSION, str(nice), *argv]


def command_session(script: str, cwd: Path, nice: int = 4) -> tuple[str, str, str]:
    """Run Python `script` as a host in a session at `nice`; it prints its session id and what
    its command printed (`ps -o sid=` and `/proc/self/autogroup`): the host's session, the
    command's session and the command's autogroup line."""
    done = subprocess.run(
        at_nice(nice, [sys.executable, "-c", script]),
        capture_output=True, text=True, timeout=60, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    host_sid, command_sid, group = done.stdout.split(maxsplit=2)
    return host_sid, command_sid, group.rstrip()
