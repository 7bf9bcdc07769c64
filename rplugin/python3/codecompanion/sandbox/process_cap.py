"""One chat's process cap (`max_processes`): its pids cgroup, which limits its commands and
sweeps what each leaves, and the cap a run gets from it, else from RLIMIT_NPROC.

A command the sandbox does not hold (one the user let out of it, one of a chat whose sandbox is
off, a tool's own helper such as rg) joins the chat's cgroup where there is one (the cap then
holds for root too, and what the command leaves there is swept when the chat's last command
ends). Where no cgroup caps it, the kernel's per-user count does: RLIMIT_NPROC is set to the
tasks the user runs now plus the cap (threads count as tasks; root is exempt, so for root only
the cgroup holds). Everything is computed in the host: the forked child only makes two system
calls.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SWEEPS = 10  # rounds of listing and killing: what forks while it dies is caught next round


def _cgroup_base() -> Path | None:
    """Our own cgroup folder that can hold a pids limit: v1's pids hierarchy, else v2's."""
    v2: Path | None = None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return Path("/sys/fs/cgroup/pids") / path.lstrip("/")
        if controllers == "":
            v2 = Path("/sys/fs/cgroup") / path.lstrip("/")
    return v2


class PidCgroup:
    """A cgroup for one chat's commands (they run one at a time): at most `limit` processes
    where the pids controller is there, and emptied after each command."""

    def __init__(self, folder: str, procs: int, limit: int, capped: bool = True) -> None:
        self.folder = folder
        self.procs = procs  # cgroup.procs, open for writing: a process joins by writing "0"
        self.limit = limit
        self.capped = capped  # False: no pids controller here, `limit` holds nothing
        self.runs = 0  # commands in it now: the last to end sweeps it
        self._finalizer = weakref.finalize(self, PidCgroup._remove, folder, procs)

    @classmethod
    def make(cls, limit: int) -> PidCgroup | None:
        """A fresh cgroup under ours, or None where we may not make one."""
        try:
            base = _cgroup_base()
            if base is None:
                return None
            folder = base / f"codecompanion-{os.getpid()}-{os.urandom(4).hex()}"
            folder.mkdir(mode=0o700)
        except OSError:
            return None
        try:
            capped = (folder / "pids.max").exists()
            if capped:
                (folder / "pids.max").write_text(str(limit))
            procs = os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
            return cls(str(folder), procs, limit, capped)
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None

    def set_limit(self, limit: int) -> None:
        """Change the process limit (the settings changed); from the next process on."""
        if limit != self.limit:
            self.limit = limit
            with contextlib.suppress(OSError):
                (Path(self.folder) / "pids.max").write_text(str(limit))

    def joined(self) -> None:
        """A command is starting in it."""
        self.runs += 1

    def left(self, spare: int | None = None) -> None:
        """A command ended: the last one running empties it (see `empty`). Commands of one
        chat may run together (read-only tools do): one's end must not kill another's."""
        self.runs = max(0, self.runs - 1)
        if self.runs == 0:
            self.empty(spare)

    def refused(self) -> int:
        """How many forks its limit refused so far (0 where the kernel does not say)."""
        listed = _read(os.path.join(self.folder, "pids.events")) or b""
        for line in listed.decode("ascii", "replace").splitlines():
            name, _sep, count = line.partition(" ")
            if name == "max" and count.strip().isdigit():
                return int(count)
        return 0

    def empty(self, spare: int | None = None) -> None:
        """Kill whatever a command left in it (a daemon that dropped the run's marker too),
        all but `spare`: the launcher waiting there for the next command."""
        if spare is None and _write(os.path.join(self.folder, "cgroup.kill"), b"1"):
            return
        for _round in range(_SWEEPS):
            listed = _read(os.path.join(self.folder, "cgroup.procs"))
            if listed is None:
                return
            pids = [int(pid) for pid in listed.split() if int(pid) != spare]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Empty and remove it."""
        self.empty()
        self._finalizer()

    @staticmethod
    def _remove(folder: str, procs: int) -> None:
        os.close(procs)
        for _attempt in range(50):  # killed members leave within milliseconds
            try:
                os.rmdir(folder)
                return
            except OSError:
                time.sleep(0.002)


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


# Plain system calls: a command's end waits on this sweep, and pathlib's layers cost as much
# as the kernel's side of such small files.
def _write(path: str, data: bytes) -> bool:
    """True if `data` was written to the file at `path` (False: no such file, or refused)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.write(fd, data) == len(data)
    except OSError:
        return False
    finally:
        os.close(fd)


def _read(path: str) -> bytes | None:
    """The whole file at `path`, or None if it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    parts = []
    try:
        while chunk := os.read(fd, 65536):
            parts.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(parts)
