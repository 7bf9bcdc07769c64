"""Confining one command: the host prepares everything, then a launcher confines itself and
executes the command.

With the native launcher (confine.c, see standby.py) one waits per chat, already in the chat's
cgroup and mount namespace; it gets the command, the Landlock rights and the mounts, makes the
system calls and executes the command. Without it (no C compiler) the forked child does the
same in Python, through subprocess's preexec_fn: it joins the chat's pid cgroup, enters its
own mount namespace (mounts.py), drops root's dangerous capabilities, restricts itself with
Landlock (landlock.py) and loads the no-network seccomp filter (seccomp.py). The host and
Neovim are never confined.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import grants as landlock_grants
from . import landlock, mounts, seccomp
from .cgroup import PidCgroup
from .settings import Permissions
from .standby import Order, Standby, Standbys, native_launcher

__all__ = ["Boundary", "Launch", "PidCgroup", "launch", "native_launcher"]

# Capabilities root loses for the command (bounding set): modules, raw I/O, mounts, tracing,
# network administration, device nodes, clocks, BPF, MAC policy, immutable files.
_DROPPED_CAPS = (9, 12, 13, 16, 17, 19, 21, 22, 23, 25, 27, 31, 32, 33, 34, 38, 39, 40)
_PR_CAPBSET_DROP, _CAP_SETPCAP = 24, 8


@functools.cache
def _prctl() -> Callable[..., int]:
    """libc's prctl() through ctypes (the in-Python launcher only)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


@dataclass(frozen=True)
class Boundary:
    """What a sandboxed command may do, for one project."""

    project: Path
    permissions: Permissions
    read_only: tuple[str, ...] = ()  # inside the project, besides .git: config file, chats
    network: bool = False  # this run may use the network (settings or a per-command approval)


@dataclass
class Launch:
    """One confined run: `start` it (native launcher) or call `preexec` in the forked child;
    `close` in the host when it ended."""

    grants: list[landlock_grants.Grant]
    ruleset: tuple[int, int, int, int]  # Landlock's attribute: fs, net, scoped, its size
    view: mounts.MountView | None
    program: bytes | None  # the no-network seccomp filter (None: network allowed)
    temp: str
    cgroup: PidCgroup | None  # the chat's, shared by its commands
    env: dict[str, str] = field(default_factory=dict)
    native: str | None = None  # codecompanion-confine, when it was built
    standbys: Standbys | None = None  # the chat's waiting launchers
    _ruleset_fd: int | None = None  # the in-Python launcher's ruleset, built in the host
    _filter: seccomp.Filter | None = None
    _taken: Standby | None = None
    _namespace_hold: int | None = None

    def start(
        self, argv: tuple[str, ...], cwd: str, env: Mapping[str, str], stdin: int | None
    ) -> subprocess.Popen[bytes]:
        """Hand `argv` to a native launcher (the chat's waiting one, else a fresh one): the
        process it returns becomes the command (OSError if none could start)."""
        assert self.native is not None
        pipe = stdin is not None
        order = Order(
            argv, cwd, env, stdin == subprocess.DEVNULL, True, self.program, self.ruleset,
            self.grants, *self._mounts(),
        )  # fmt: skip
        taken = self.standbys.take(pipe) if self.standbys is not None else self._fresh(pipe)
        if self.standbys is not None:
            self._namespace_hold = taken.hold_namespace()
        try:
            taken.hand_over(order)
        except OSError:  # it died after all: a fresh one
            taken.drop()
            taken = self._fresh(pipe)
            try:
                taken.hand_over(order)
            except OSError:
                taken.drop()
                raise
        self._taken = taken
        if stdin == subprocess.DEVNULL and taken.popen.stdin is not None:
            taken.popen.stdin.close()  # the launcher reads /dev/null instead
            taken.popen.stdin = None
        if self.standbys is not None:
            with contextlib.suppress(OSError):  # the next command's, while this one runs
                self.standbys.fill()
        return taken.popen

    def _fresh(self, stdin_pipe: bool) -> Standby:
        assert self.native is not None
        return Standby(self.native, self._procs(), self._namespace(), stdin_pipe)

    def _mounts(self) -> tuple[tuple[tuple[bytes, int], ...], tuple[bytes, ...], tuple[bytes, ...]]:
        if self.view is None:
            return (), (), ()
        return self.view.read_only, self.view.hidden_dirs, self.view.hidden_files

    def _procs(self) -> int:
        return self.cgroup.procs if self.cgroup is not None else -1

    def _namespace(self) -> int:
        if self.view is None:
            return 0
        return 2 if self.view.user_namespace else 1

    def members(self) -> list[int] | None:
        """Every process the command started (it cannot leave the chat's cgroup), but the
        launcher waiting there; None without a cgroup."""
        if self.cgroup is None:
            return None
        return self.cgroup.members(self.standbys.spare if self.standbys is not None else None)

    def exec_error(self) -> str | None:
        """Why the native launcher could not execute the command (None: it did)."""
        return self._taken.exec_error() if self._taken is not None else None

    def preexec(self) -> None:
        """Confine the calling (child) process; any failure stops the command from starting."""
        assert self._ruleset_fd is not None
        if self.cgroup is not None:
            os.write(self.cgroup.procs, b"0")
        if self.view is not None:
            self.view.enter()
        if os.geteuid() == 0:
            for cap in _DROPPED_CAPS:
                _prctl()(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        seccomp.no_new_privs()
        landlock.restrict_self(self._ruleset_fd)
        if self._filter is not None:
            self._filter.install()

    def prepare_in_python(self, abi: int) -> None:
        """Build what the forked child needs in the host (it may not load libraries)."""
        deny_tcp = self.ruleset[1] != 0
        self._ruleset_fd = landlock.build(abi, self.grants, deny_tcp=deny_tcp)
        self._filter = seccomp.Filter(self.program) if self.program is not None else None
        mounts.load_libc()
        _prctl()

    def close(self) -> None:
        """Release the ruleset and the private temp folder; empty the cgroup."""
        if self._ruleset_fd is not None:
            os.close(self._ruleset_fd)
        if self._taken is not None:
            self._taken.close()
        if self._namespace_hold is not None and self.standbys is not None:
            self.standbys.retire(self._namespace_hold)
        shutil.rmtree(self.temp, ignore_errors=True)
        if self.cgroup is not None:
            self.cgroup.empty(spare=self.standbys.spare if self.standbys is not None else None)


def launch(
    boundary: Boundary,
    abi: int,
    with_mounts: bool,
    cgroup: PidCgroup | None = None,
    standbys: Standbys | None = None,
) -> Launch:
    """Prepare one run (in the host): Landlock's rights, mount view, filter, private temp."""
    temp = tempfile.mkdtemp(prefix="codecompanion-run-")
    project = str(boundary.project)
    writable = (project, temp, *(os.path.expanduser(p) for p in boundary.permissions.writable))
    protected = [os.path.join(project, ".git"), *boundary.read_only]
    if with_mounts:  # read-only mounts take .git back, tmpfs hides the denied paths
        grants = landlock_grants.readable() + [(path, landlock.WRITE_RIGHTS) for path in writable]
    else:  # Landlock alone: every entry beside them (no new file at the project's top level)
        grants = landlock_grants.readable(_existing(boundary.permissions.deny_read))
        kept = _existing(protected)
        grants += landlock_grants.around(project, kept, landlock.WRITE_RIGHTS)
        grants += [(path, landlock.WRITE_RIGHTS) for path in writable[1:]]
    handled = landlock.handled_fs(abi)
    grants = [(path, rights & handled) for path, rights in grants]
    network = boundary.network or boundary.permissions.network
    view = None
    if with_mounts:
        view = mounts.plan(protected, list(boundary.permissions.deny_read), writable)
    run = Launch(
        grants=grants,
        ruleset=landlock.ruleset_attr(abi, deny_tcp=not network, scoped=True),
        view=view,
        program=None if network else seccomp.no_network_program(),
        temp=temp,
        cgroup=cgroup,
        env={"TMPDIR": temp, "TMP": temp, "TEMP": temp},
        native=native_launcher(),
        standbys=standbys,
    )
    if run.native is None:
        try:
            run.prepare_in_python(abi)
        except OSError:
            shutil.rmtree(temp, ignore_errors=True)
            raise
    return run


def _existing(paths: Iterable[str]) -> list[str]:
    """The real paths of those that exist (`~` expanded)."""
    found = (os.path.realpath(os.path.expanduser(path)) for path in paths)
    return [path for path in found if os.path.lexists(path)]
