"""Confining one command: the host prepares everything, the forked child confines itself and
executes the command.

The child (between fork and exec, through subprocess's preexec_fn) joins the run's pid cgroup,
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
from collections.abc import Callable
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


def _readable_grants() -> list[tuple[str, int]]:
    """Read and execute everywhere but /dev; in /dev only the harmless devices."""
    grants = [
        (os.path.join("/", name), landlock.READ_RIGHTS)
        for name in sorted(os.listdir("/"))
        if name != "dev"
    ]
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


def _pid_cgroup(limit: int) -> tuple[str, int] | None:
    """A fresh cgroup under ours for one run (at most `limit` processes where the pids
    controller is there): (folder, its cgroup.procs opened for writing), or None."""
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
        return str(folder), os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        with contextlib.suppress(OSError):
            folder.rmdir()
        return None


def _kill_members(folder: str) -> None:
    """Kill whatever the run left in its cgroup: a daemon that dropped the run's marker too."""
    kill = Path(folder) / "cgroup.kill"
    with contextlib.suppress(OSError):
        if kill.exists():
            kill.write_text("1")
            return
        for pid in (Path(folder) / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)


@dataclass
class Launch:
    """One confined run: call `preexec` in the child; `close` in the host when it ended."""

    ruleset: int
    view: mounts.MountView | None
    filter: seccomp.Filter | None
    temp: str
    cgroup: tuple[str, int] | None
    env: dict[str, str] = field(default_factory=dict)

    def preexec(self) -> None:
        """Confine the calling (child) process; any failure stops the command from starting."""
        if self.cgroup is not None:
            os.write(self.cgroup[1], b"0")
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
        """Release the ruleset, the private temp folder and the cgroup."""
        os.close(self.ruleset)
        shutil.rmtree(self.temp, ignore_errors=True)
        if self.cgroup is not None:
            os.close(self.cgroup[1])
            _kill_members(self.cgroup[0])
            for _attempt in range(50):  # the killed members leave within milliseconds
                try:
                    os.rmdir(self.cgroup[0])
                    break
                except OSError:
                    time.sleep(0.002)


def launch(boundary: Boundary, abi: int, with_mounts: bool) -> Launch:
    """Prepare one run (in the host): ruleset, mount view, filter, private temp, cgroup."""
    temp = tempfile.mkdtemp(prefix="codecompanion-run-")
    project = str(boundary.project)
    writable = (project, temp, *(os.path.expanduser(p) for p in boundary.permissions.writable))
    grants = _readable_grants() + [(path, landlock.WRITE_RIGHTS) for path in writable]
    network = boundary.network or boundary.permissions.network
    try:
        ruleset = landlock.build(abi, grants, deny_tcp=not network)
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    view = None
    if with_mounts:
        protected = [os.path.join(project, ".git"), *boundary.read_only]
        view = mounts.plan(protected, list(boundary.permissions.deny_read), writable)
    no_network = None if network else seccomp.Filter(seccomp.no_network_program())
    cgroup = _pid_cgroup(boundary.permissions.max_processes)
    env = {"TMPDIR": temp, "TMP": temp, "TEMP": temp}
    return Launch(ruleset, view, no_network, temp, cgroup, env)


Preexec = Callable[[], None]


def supported_platform() -> bool:
    """Linux on a machine the seccomp filter knows."""
    return sys.platform == "linux" and seccomp.supported()
