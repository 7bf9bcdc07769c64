"""The chat's process cap (`max_processes`) for a command its sandbox does not hold: one the
user let out of the sandbox, one of a chat whose sandbox is off, a tool's own helper (rg).

Such a command joins the chat's pids cgroup where there is one (the cap then holds for root
too, and what the command leaves there is swept when the chat's last command ends). Where no
cgroup caps it, the kernel's per-user count does: RLIMIT_NPROC is set to the tasks the user
runs now plus the cap (threads count as tasks; root is exempt, so for root only the cgroup
holds). Everything is computed in the host: the forked child only makes two system calls.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

from .cgroup import PidCgroup


def _no_spare() -> int | None:
    return None


def user_tasks(uid: int) -> int:
    """How many tasks (processes and their threads) `uid` runs now, as the kernel counts them
    against RLIMIT_NPROC: one `stat` per process (a `task` folder's link count is its number
    of threads plus two)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            tasks = os.stat(f"/proc/{entry}/task")
        except OSError:  # it ended meanwhile
            continue
        if tasks.st_uid == uid:
            count += max(1, tasks.st_nlink - 2)
    return count


@dataclass(frozen=True)
class ProcessCap:
    """At most `limit` processes for one run and all it starts: by `cgroup`, else by
    `nproc` (RLIMIT_NPROC's value for the run; None: left as it is)."""

    limit: int
    cgroup: PidCgroup | None = None
    nproc: int | None = None
    spare: Callable[[], int | None] = _no_spare  # the sandbox's waiting launcher: not swept

    @classmethod
    def of(
        cls, limit: int, cgroup: PidCgroup | None, spare: Callable[[], int | None]
    ) -> ProcessCap:
        """The cap as this machine can hold it now."""
        if cgroup is not None and cgroup.capped:
            return cls(limit, cgroup, None, spare)
        return cls(limit, cgroup, rlimit_for(limit), spare)

    def preexec(self) -> None:
        """In the forked child, before it executes the command: join the cgroup, set the
        limit (a cgroup we may not join leaves the limit to RLIMIT_NPROC)."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                os.write(self.cgroup.procs, b"0")
        if self.nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))

    def apply(self, pid: int) -> None:
        """Set the limit on a started process that has not executed its command yet (the
        sandbox's waiting launcher). One in a user namespace of its own made it before it had
        the limit, so the kernel holds only the tasks in that namespace to it: there the
        limit is the cap itself (the launcher becomes the command)."""
        if self.nproc is None:
            return
        value = self.limit if _own_namespace(pid) else self.nproc
        with contextlib.suppress(OSError):
            resource.prlimit(pid, resource.RLIMIT_NPROC, (value, value))

    def refusals(self) -> int:
        """How many forks the chat's cgroup refused so far (0: none, or no cgroup)."""
        return self.cgroup.refused() if self.cgroup is not None else 0


def _own_namespace(pid: int) -> bool:
    """True if process `pid` is in another user namespace than ours."""
    try:
        return os.stat(f"/proc/{pid}/ns/user").st_ino != os.stat("/proc/self/ns/user").st_ino
    except OSError:
        return False


def rlimit_for(limit: int) -> int:
    """RLIMIT_NPROC for a run allowed `limit` processes beyond the user's tasks now, never
    above the host's own hard limit (a user may not raise it)."""
    wanted = user_tasks(os.getuid()) + limit
    _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
