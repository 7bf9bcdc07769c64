"""Child processes of this test process, read from `ps` (Linux and macOS)."""

from __future__ import annotations

import os
import subprocess


def children(marker: str) -> list[int]:
    """Pids of live (not zombie) direct children of this process whose command has `marker`."""
    out = subprocess.run(
        ["ps", "-A", "-ww", "-o", "pid=,ppid=,stat=,args="],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pids = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and int(parts[1]) == os.getpid() and marker in parts[3]:
            if not parts[2].startswith("Z"):
                pids.append(int(parts[0]))
    return pids
