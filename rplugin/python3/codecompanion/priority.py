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

The host then steps `HOST_NICE` (setup's `host_nice`) below that: when the machine is busy, the
editor's session wins the CPU from the host's. Measured with one busy process per core in the
editor's session, streaming a 10,000-chunk answer, the editor's worst reply time went from a
median of 18 ms (same nice) to 12 ms (+2), 10-14 ms (+3) and 9.5 ms (+4), while the stream took
8 %, 20 % and 25 % longer to show.
"""

from __future__ import annotations

import errno
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

log = logging.getLogger("codecompanion.priority")

_NICE = re.compile(r"\bnice\s+(-?\d+)")
PROC = Path("/proc")
HOST_NICE = 3  # steps below the editor's priority, unless setup's `host_nice` says otherwise
HOST_NICE_ENV = "CODECOMPANION_HOST_NICE"  # how Lua passes `host_nice` to the host it starts
MAX_NICE = 19
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
    return _set(target, wanted, proc) if wanted is not None else "same"


def _set(target: int | str, wanted: int, proc: Path) -> PriorityChange:
    """Put `target`'s autogroup at nice `wanted` (nothing where it has none or is there)."""
    current = autogroup_nice(target, proc)
    if current is None or wanted == current:
        return "same"
    try:
        (proc / str(target) / "autogroup").write_text(str(wanted))
    except OSError as exc:
        log.info("priority of %s stays at nice %d, not %d: %s", target, current, wanted, exc)
        return "busy" if exc.errno == errno.EAGAIN else "denied"
    return "set"


def host_offset(env: Mapping[str, str] = os.environ) -> int:
    """How many nice steps below the editor the host runs (`HOST_NICE_ENV`, else `HOST_NICE`)."""
    text = env.get(HOST_NICE_ENV, "").strip()
    if not text:
        return HOST_NICE
    try:
        steps = int(text)
    except ValueError:
        log.warning("%s=%r is not a whole number: %d steps below", HOST_NICE_ENV, text, HOST_NICE)
        return HOST_NICE
    return min(max(steps, 0), MAX_NICE)


def follow_editor(editor_pid: int, offset: int = 0, proc: Path = PROC) -> PriorityChange:
    """Give this process's autogroup the nice of `editor_pid`'s, `offset` steps lower (≤ 19)."""
    editor = autogroup_nice(editor_pid, proc)
    if editor is None:
        return "same"
    return _set("self", min(editor + offset, MAX_NICE), proc)
