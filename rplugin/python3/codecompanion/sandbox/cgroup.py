"""One chat's pids cgroup: a process limit for its commands, and a sweep after each."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import weakref
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
