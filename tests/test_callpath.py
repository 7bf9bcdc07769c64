"""One tool call run from the command line walks through few of the package's files.

The bounds are those of the one-path issue: a `read_file` of a one-line file enters at most 14
files and switches file at most 120 times; an `insert_edit_into_file` at most 20 and 200. The
native tool contract's issue holds `run_command` of `echo hi` to the 39 files it walked before
the contract (at most 400 switches; 39 with the native launcher in the sandbox, fewer with the
in-Python launcher or no sandbox). The counts come from bench/callpath.py (a profile hook under
the event loop, imports not counted) and do not depend on the machine's load.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOUNDS = {"read_file": (14, 120), "insert_edit_into_file": (20, 200), "run_command": (39, 400)}


def test_one_call_walks_few_files() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.callpath"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = {
        match[1]: (int(match[2]), int(match[3]), int(match[4]))
        for match in re.finditer(
            r"^(\w+): files=(\d+) switches=(\d+) \(exit (\d+)\)", done.stdout, re.M
        )
    }
    assert set(found) == set(BOUNDS), done.stdout + done.stderr
    for name, (files, switches, status) in found.items():
        assert status == 0, done.stdout
        assert files <= BOUNDS[name][0] and switches <= BOUNDS[name][1], (name, files, switches)
