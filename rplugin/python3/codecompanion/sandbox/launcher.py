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

import asyncio
import contextlib
import functools
import logging
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import landlock, mounts, seccomp
from .process_cap import PidCgroup
from .rulebook import Boundary, RuleBook
from .standby import Order, Rules, Standby, Standbys, native_launcher, private_temp, remove_temp

__all__ = ["Boundary", "Launch", "PidCgroup", "launch", "native_launcher"]

log = logging.getLogger("codecompanion.sandbox")

# Capabilities root loses for the command (bounding set): modules, raw I/O, mounts, tracing,
# network administration, device nodes, clocks, BPF, MAC policy, immutable files.
_DROPPED_CAPS = (9, 12, 13, 16, 17, 19, 21, 22, 23, 25, 27, 31, 32, 33, 34, 38, 39, 40)
_PR_CAPBSET_DROP, _CAP_SETPCAP = 24, 8


@functools.cache
def _prctl() -> Callable[..., int]:
    """libc's prctl() through ctypes (the in-Python launcher only)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


@dataclass
class Launch:
    """One confined run: `start` it (native launcher) or call `preexec` in the forked child;
    `close` in the host when it ended."""

    rules: Rules
    view: mounts.MountView | None
    temp: str
    cgroup: PidCgroup | None  # the chat's, shared by its commands
    env: dict[str, str] = field(default_factory=dict)
    native: str | None = None  # codecompanion-confine, when it was built
    standbys: Standbys | None = None  # the chat's waiting launchers
    _taken: Standby | None = None  # confined by `rules` already (native), or None
    _command: bytes | None = None  # the command's message, once `begin` encoded it
    _sent: bool = False
    _lost: str | None = None  # why the launcher never got the command
    _watching: tuple[asyncio.AbstractEventLoop, int] | None = None
    _ruleset_fd: int | None = None  # the in-Python launcher's ruleset, built in the host
    _filter: seccomp.Filter | None = None
    _namespace_hold: int | None = None

    def begin(
        self, argv: tuple[str, ...], cwd: str, env: Mapping[str, str], stdin: int | None
    ) -> subprocess.Popen[bytes]:
        """Make ready the launcher that becomes `argv`: the chat's waiting one (confined
        already) or a fresh one told the rules (OSError if none could start). The host sets up
        its side of the process, then `go` hands it the command."""
        assert self.native is not None
        # Encoded (or refused: a NUL byte) before a launcher is touched.
        self._command = Order(argv, cwd, env, stdin == subprocess.DEVNULL).message()
        pipe = stdin is not None
        taken, self._taken = self._taken, None
        if taken is not None and not pipe:  # it inherits our stdin: only a fresh launcher can
            taken.drop()
            taken = None
        for attempt in range(2):  # a launcher that died after all: a fresh one, once
            taken = taken if taken is not None else self._fresh(pipe)
            try:
                self._make_ready(taken)
                break
            except OSError:
                taken.drop()
                taken = None
                if attempt:
                    raise
        assert taken is not None
        self._taken = taken
        if stdin == subprocess.DEVNULL and taken.popen.stdin is not None:
            taken.popen.stdin.close()  # the launcher reads /dev/null instead
            taken.popen.stdin = None
        return taken.popen

    def go(self) -> None:
        """Send the command. The launcher executes it at once, on this CPU most often (it was
        woken from here): nothing of the host's is left to do before it. A launcher that
        ended meanwhile is killed (if need be) and `exec_error` says so."""
        assert self._taken is not None and self._command is not None
        self._sent = True
        try:
            self._taken.hand_over(self._command)
        except OSError:
            self._lost = "the sandbox's launcher ended before the command reached it"
            with contextlib.suppress(OSError):
                self._taken.popen.kill()
            return
        self._refill_when_running(self._taken)

    def _make_ready(self, taken: Standby) -> None:
        if self.standbys is not None and self._namespace_hold is None:
            self._namespace_hold = taken.hold_namespace()
        if taken.rules is None:
            taken.confine(self.rules, self.temp)

    def _fresh(self, stdin_pipe: bool) -> Standby:
        if self.standbys is not None:
            return self.standbys.fresh(stdin_pipe)
        assert self.native is not None
        procs = self.cgroup.procs if self.cgroup is not None else -1
        namespace = 0 if self.view is None else 2 if self.view.user_namespace else 1
        return Standby(self.native, procs, namespace, stdin_pipe)

    def _refill_when_running(self, taken: Standby) -> None:
        """Start the next command's launcher once this command was executed (its launcher's
        control socket closes at exec), not while the host hands it over."""
        if self.standbys is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._fill()
            return
        fd = taken.control.fileno()
        loop.add_reader(fd, self._running)
        self._watching = (loop, fd)

    def _running(self) -> None:
        if self._watching is not None:
            loop, fd = self._watching
            self._watching = None
            loop.remove_reader(fd)
            self._fill()

    def _fill(self) -> None:
        if self.standbys is not None:
            try:
                self.standbys.fill()
            except OSError as exc:  # the next command then gets a fresh launcher
                log.warning("the sandbox's launcher did not start: %s", exc)

    def exec_error(self) -> str | None:
        """Why the native launcher could not execute the command (None: it did)."""
        if self._lost is not None:
            return self._lost
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
        deny_tcp = self.rules.ruleset[1] != 0
        self._ruleset_fd = landlock.build(abi, self.rules.granted(self.temp), deny_tcp=deny_tcp)
        program = self.rules.program
        self._filter = seccomp.Filter(program) if program is not None else None
        mounts.load_libc()
        _prctl()

    def close(self) -> None:
        """Release the ruleset and the launcher (the private temp folder goes with
        `remove_temp`; the cgroup is emptied by the run, when the chat's last command ends)."""
        if self._watching is not None:  # the command never ran: the next launcher starts now
            loop, fd = self._watching
            self._watching = None
            loop.remove_reader(fd)
            self._fill()
        if self._ruleset_fd is not None:
            os.close(self._ruleset_fd)
        if self._taken is not None and self._sent:
            self._taken.close()
        elif self._taken is not None:  # confined for this run, never handed its command
            self._taken.drop()
        if self._namespace_hold is not None and self.standbys is not None:
            self.standbys.retire(self._namespace_hold)

    def remove_temp(self) -> None:
        """Remove the private temp folder in the loop's worker thread (here when no loop runs):
        removing folders can wait on the file system's journal."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            remove_temp(self.temp)
            return
        loop.run_in_executor(None, functools.partial(remove_temp, self.temp))


def launch(
    boundary: Boundary,
    abi: int,
    with_mounts: bool,
    cgroup: PidCgroup | None = None,
    standbys: Standbys | None = None,
    book: RuleBook | None = None,
) -> Launch:
    """Prepare one run (in the host): its rules as the files are now (from the chat's `book`
    when nothing they depend on changed), and the chat's waiting launcher when it was confined
    by exactly those (with its private temp), else a new temp."""
    wanted, view = (book or RuleBook()).rules(boundary, abi, with_mounts)
    native = native_launcher()
    taken = standbys.take(wanted) if standbys is not None and native is not None else None
    temp = taken.temp if taken is not None and taken.temp is not None else None
    run = Launch(
        rules=wanted,
        view=view,
        temp=temp or private_temp(),
        cgroup=cgroup,
        native=native,
        standbys=standbys,
        _taken=taken,
    )
    run.env.update(TMPDIR=run.temp, TMP=run.temp, TEMP=run.temp)
    if run.native is None:
        try:
            run.prepare_in_python(abi)
        except OSError:
            remove_temp(run.temp)
            raise
    return run
