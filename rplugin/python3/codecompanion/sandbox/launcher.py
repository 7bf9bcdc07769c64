"""Confining one command: the host prepares everything, the forked child confines itself and
executes the command.

The child (between fork and exec, through subprocess's preexec_fn) joins the chat's pid cgroup,
enters its own mount namespace (mounts.py), drops root's dangerous capabilities, restricts
itself with Landlock (landlock.py) and loads the no-network seccomp filter (seccomp.py). The
host and Neovim are never confined.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import tempfile
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import landlock, mounts, seccomp
from .settings import Permissions

# Devices a command may write (and ioctl): the harmless ones. Every other device is read-only
# at most, and terminals are not opened at all (no keystrokes stolen from Neovim's terminal).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# Capabilities root loses for the command (bounding set): modules, raw I/O, mounts, tracing,
# network administration, device nodes, clocks, BPF, MAC policy, immutable files.
_DROPPED_CAPS = (9, 12, 13, 16, 17, 19, 21, 22, 23, 25, 27, 31, 32, 33, 34, 38, 39, 40)
_PR_CAPBSET_DROP, _CAP_SETPCAP = 24, 8
_prctl = ctypes.CDLL(None, use_errno=True).prctl


@dataclass(frozen=True)
class Boundary:
    """What a sandboxed command may do, for one project."""

    project: Path
    permissions: Permissions
    read_only: tuple[str, ...] = ()  # inside the project, besides .git: config file, chats
    network: bool = False  # this run may use the network (settings or a per-command approval)


def _around(folder: str, excluded: list[str], rights: int) -> list[tuple[str, int]]:
    """Grants of `rights` on everything under `folder` except `excluded` (real paths): each
    entry on its own (never a symbolic link), going down into the folders that hold an
    excluded path.

    Landlock only adds rights, so "all but X" is the entries beside X, level by level; the
    folders on the way down get no rule (their own entries can be used, not listed).
    """
    grants: list[tuple[str, int]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return grants
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path):
            continue  # a rule would hold its target: where it leads is granted (or not) there
        if any(path == gone or gone.startswith(path.rstrip("/") + "/") for gone in excluded):
            if os.path.isdir(path) and path not in excluded:
                grants += _around(path, excluded, rights)
            continue
        grants.append((path, rights))
    return grants


def _readable_grants(denied: list[str] | None = None) -> list[tuple[str, int]]:
    """Read and execute everywhere but /dev (and `denied`, when no mount hides them); in /dev
    only the harmless devices."""
    excluded = ["/dev", *(denied or [])]
    grants = _around("/", excluded, landlock.READ_RIGHTS)
    grants.append(("/dev", landlock.READ_DIR))
    device = landlock.READ_FILE | landlock.WRITE_FILE | landlock.IOCTL_DEV | landlock.TRUNCATE
    grants += [(path, device) for path in _DEVICES]
    return grants


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

    def __init__(self, folder: str, procs: int) -> None:
        self.folder = folder
        self.procs = procs  # cgroup.procs, open for writing: a child joins by writing "0"
        self._finalizer = weakref.finalize(self, PidCgroup._remove, folder, procs)

    @classmethod
    def make(cls, limit: int) -> PidCgroup | None:
        """A fresh cgroup under ours, or None where we may not make one."""
        try:
            base = _cgroup_base()
            if base is None:
                return None
            folder = Path(tempfile.mkdtemp(prefix="codecompanion-", dir=base))
        except OSError:
            return None
        try:
            if (folder / "pids.max").exists():
                (folder / "pids.max").write_text(str(limit))
            return cls(str(folder), os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None

    def empty(self) -> None:
        """Kill whatever a command left in it: a daemon that dropped the run's marker too."""
        kill = Path(self.folder) / "cgroup.kill"
        with contextlib.suppress(OSError):
            if kill.exists():
                kill.write_text("1")
                return
            for pid in (Path(self.folder) / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)

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


@dataclass
class Launch:
    """One confined run: call `preexec` in the child; `close` in the host when it ended."""

    ruleset: int
    view: mounts.MountView | None
    filter: seccomp.Filter | None
    temp: str
    cgroup: PidCgroup | None  # the chat's, shared by its commands
    env: dict[str, str] = field(default_factory=dict)
    native: str | None = None  # codecompanion-confine, when it was built
    _pipes: list[int] = field(default_factory=list)
    _error: int | None = None  # read end: errno of a failed exec, from the native launcher

    def wrap(self, argv: tuple[str, ...]) -> tuple[list[str], tuple[int, ...]]:
        """The native launcher's command line for `argv`, and the descriptors it inherits."""
        assert self.native is not None
        program = -1
        if self.filter is not None:
            program, end = os.pipe2(os.O_CLOEXEC)
            os.write(end, self.filter.program)  # 0.2 KB: the pipe holds it
            os.close(end)
            self._pipes.append(program)
        self._error, err = os.pipe2(os.O_CLOEXEC)
        self._pipes += [self._error, err]
        procs = self.cgroup.procs if self.cgroup is not None else -1
        view = self.view or mounts.MountView((), (), (), False, (0, 0))
        head = [self.native, str(self.ruleset), str(procs), str(program), str(err)]
        head += ["1" if view.user_namespace else "0", *map(str, view.ids), "1"]
        head.append(str(len(view.read_only)))
        for path, kept in view.read_only:
            head += [os.fsdecode(path), str(kept)]
        for group in (view.hidden_dirs, view.hidden_files):
            head += [str(len(group)), *map(os.fsdecode, group)]
        fds = (
            (self.ruleset, err)
            + ((procs,) if procs >= 0 else ())
            + ((program,) if program >= 0 else ())
        )
        return [*head, "--", *argv], fds

    def exec_error(self) -> str | None:
        """Why the native launcher could not execute the command (None: it did)."""
        if self._error is None:
            return None
        os.set_blocking(self._error, False)
        try:
            data = os.read(self._error, 4)
        except OSError:
            return None
        return os.strerror(int.from_bytes(data, sys.byteorder)) if len(data) == 4 else None

    def preexec(self) -> None:
        """Confine the calling (child) process; any failure stops the command from starting."""
        if self.cgroup is not None:
            os.write(self.cgroup.procs, b"0")
        if self.view is not None:
            self.view.enter()
        if os.geteuid() == 0:
            for cap in _DROPPED_CAPS:
                _prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        seccomp.no_new_privs()
        landlock.restrict_self(self.ruleset)
        if self.filter is not None:
            self.filter.install()

    def close(self) -> None:
        """Release the ruleset and the private temp folder; empty the cgroup."""
        os.close(self.ruleset)
        for fd in self._pipes:
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.temp, ignore_errors=True)
        if self.cgroup is not None:
            self.cgroup.empty()


def launch(
    boundary: Boundary, abi: int, with_mounts: bool, cgroup: PidCgroup | None = None
) -> Launch:
    """Prepare one run (in the host): ruleset, mount view, filter, private temp, cgroup."""
    temp = tempfile.mkdtemp(prefix="codecompanion-run-")
    project = str(boundary.project)
    writable = (project, temp, *(os.path.expanduser(p) for p in boundary.permissions.writable))
    protected = [os.path.join(project, ".git"), *boundary.read_only]
    if with_mounts:  # read-only mounts take .git back, tmpfs hides the denied paths
        grants = _readable_grants() + [(path, landlock.WRITE_RIGHTS) for path in writable]
    else:  # Landlock alone: every entry beside them (no new file at the project's top level)
        grants = _readable_grants(_existing(boundary.permissions.deny_read))
        kept = _existing(protected)
        grants += _around(project, kept, landlock.WRITE_RIGHTS)
        grants += [(path, landlock.WRITE_RIGHTS) for path in writable[1:]]
    network = boundary.network or boundary.permissions.network
    try:
        ruleset = landlock.build(abi, grants, deny_tcp=not network)
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    view = None
    if with_mounts:
        view = mounts.plan(protected, list(boundary.permissions.deny_read), writable)
    no_network = None if network else seccomp.Filter(seccomp.no_network_program())
    env = {"TMPDIR": temp, "TMP": temp, "TEMP": temp}
    return Launch(ruleset, view, no_network, temp, cgroup, env, native_launcher())


def _existing(paths: Iterable[str]) -> list[str]:
    """The real paths of those that exist (`~` expanded)."""
    found = (os.path.realpath(os.path.expanduser(path)) for path in paths)
    return [path for path in found if os.path.lexists(path)]


def native_launcher() -> str | None:
    """The compiled launcher next to the host's Python (`make install` builds it with a C
    compiler); None: the child confines itself in Python, which costs a fork of the host."""
    path = os.path.join(os.path.dirname(sys.executable), "codecompanion-confine")
    return path if os.access(path, os.X_OK) else None
