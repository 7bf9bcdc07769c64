"""CPU priority: the host and the commands it runs get the editor's.

Neovim starts every job in a session of its own (setsid), and so does the host for every tool
command; on Linux with autogroup scheduling each session is one scheduling group, weighted by its
autogroup `nice`. A priority given to the editor's session therefore never reached the host or
its commands: with the editor's session at nice -15 and one busy process per core beside it,
the host waited 3.7 s on the run queue to stream a 10,000-chunk answer that took it 0.15 s of
CPU, and `sleep 2` took up to 10.9 s. So the host takes its editor's autogroup nice when it
starts, and gives its own to each command's session. Following a lowered priority always works;
following a raised one needs the privilege raising the editor's did (CAP_SYS_NICE or
RLIMIT_NICE).
"""

from __future__ import annotations

import errno
import logging
import re
from pathlib import Path
from typing import Literal

log = logging.getLogger("codecompanion.priority")

_NICE = re.compile(r"\bnice\s+(-?\d+)")
PROC = Path("/proc")
# "same": nothing to change (or no autogroups); "busy": the kernel lets an unprivileged process
# make one change every 100 ms system-wide and another just made one (worth a later try).
PriorityChange = Literal["same", "set", "denied", "busy"]


def autogroup_nice(pid: int | str, proc: Path = PROC) -> int | None:
    """The autogroup nice of process `pid` ("self" for this one); None where there is none."""
    try:
        found = _NICE.search((proc / str(pid) / "autogroup").read_text())
    except OSError:
        return None
    return int(found.group(1)) if found else None


def share(source: int | str, target: int | str, proc: Path = PROC) -> PriorityChange:
    """Give `target`'s autogroup (its whole session) the nice of `source`'s."""
    wanted = autogroup_nice(source, proc)
    current = autogroup_nice(target, proc)
    if wanted is None or current is None or wanted == current:
        return "same"
    try:
        (proc / str(target) / "autogroup").write_text(str(wanted))
    except OSError as exc:
        log.info("priority of %s stays at nice %d, not %d: %s", target, current, wanted, exc)
        return "busy" if exc.errno == errno.EAGAIN else "denied"
    return "set"


def follow_editor(editor_pid: int, proc: Path = PROC) -> PriorityChange:
    """Give this process's autogroup the nice of `editor_pid`'s."""
    return share(editor_pid, "self", proc)
