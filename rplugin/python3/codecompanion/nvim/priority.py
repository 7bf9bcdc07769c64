"""The host's CPU priority: the one its editor has.

Neovim starts every job in a session of its own (setsid), and on Linux with autogroup
scheduling each session is one scheduling group whose weight is its autogroup `nice`. A
priority given to the editor's session therefore never reached the host: with the editor's
session at nice -15 and one busy process per core beside it, the host waited 3.7 s on the run
queue to stream a 10,000-chunk answer that took it 0.15 s of CPU. The host takes its editor's
autogroup nice when it starts: following a lowered priority always works, following a raised
one needs the privilege raising the editor's did (CAP_SYS_NICE or RLIMIT_NICE).
"""

from __future__ import annotations

import errno
import logging
import re
from pathlib import Path

log = logging.getLogger("codecompanion.nvim")

_NICE = re.compile(r"\bnice\s+(-?\d+)")
PROC = Path("/proc")


def autogroup_nice(pid: int | str, proc: Path = PROC) -> int | None:
    """The autogroup nice of process `pid` ("self" for this one); None where there is none."""
    try:
        found = _NICE.search((proc / str(pid) / "autogroup").read_text())
    except OSError:
        return None
    return int(found.group(1)) if found else None


def follow_editor(editor_pid: int, proc: Path = PROC) -> str:
    """Give this process's autogroup the nice of `editor_pid`'s.

    Returns "same" (nothing to do or nothing to follow), "set", "denied" (the editor's raise
    needs a privilege the host lacks) or "busy" (the kernel lets an unprivileged process make
    one change every 100 ms system-wide, and another just made one: worth a later try).
    """
    wanted = autogroup_nice(editor_pid, proc)
    current = autogroup_nice("self", proc)
    if wanted is None or current is None or wanted == current:
        return "same"
    try:
        (proc / "self" / "autogroup").write_text(str(wanted))
    except OSError as exc:
        busy = exc.errno == errno.EAGAIN
        log.info("host priority stays at nice %d, not the editor's %d: %s", current, wanted, exc)
        return "busy" if busy else "denied"
    return "set"
