"""Running a program in a session of its own at a given autogroup nice (Linux)."""

from __future__ import annotations

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
