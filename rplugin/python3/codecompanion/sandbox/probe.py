"""Which command sandbox works on this machine, and why not when none does."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from . import grants, landlock, seccomp
from .standby import Order, Rules, Standby, native_launcher

SandboxKind = Literal["landlock", "seatbelt", "none"]

_TIMEOUT = 10.0  # seconds for the probe's confined `true`
_NO_LANDLOCK = "the kernel has no Landlock (Linux 5.13+, lsm=landlock)"
_NO_MOUNTS = "no mount namespace (user namespaces are off for this user, or refused by a policy)"


@dataclass(frozen=True)
class Availability:
    """The sandbox commands get here: its kind, Landlock's ABI, and what is missing."""

    kind: SandboxKind
    abi: int = 0
    mounts: bool = False  # a private mount namespace (read-only .git, hidden secrets)
    reason: str = ""  # why there is none, or what this one lacks

    @property
    def confined(self) -> bool:
        """True when commands really run in a sandbox."""
        return self.kind != "none"


@dataclass
class _Trial:
    """The native launcher confining `true` under Landlock and seccomp, for real."""

    standby: Standby

    @classmethod
    def begin(cls, program: str) -> _Trial:
        namespace = 1 if os.geteuid() == 0 else 2
        return cls(Standby(program, -1, namespace, stdin_pipe=True))

    def message(self, abi: int) -> bytes:
        """`true` with every right read-only, no network (the command path's own steps)."""
        rules = Rules(
            grants=tuple((p, r & landlock.handled_fs(abi)) for p, r in grants.readable()),
            temp_rights=0,
            ruleset=landlock.ruleset_attr(abi, deny_tcp=True, scoped=True),
            program=seccomp.no_network_program(),
        )
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return rules.message(None) + Order(("true",), str(Path.cwd()), env, True).message()

    def verdict(self, failure: str | None) -> Availability:
        """What the trial showed; it ends the launcher (closing its socket) if it still waits."""
        popen = self.standby.popen
        error = self.standby.exec_error()
        ready = self.standby.ready
        self.standby.control.close()
        try:
            code = popen.wait(_TIMEOUT)
        except subprocess.TimeoutExpired:
            popen.kill()
            code = popen.wait()
        said = popen.stderr.read().decode(errors="replace").strip() if popen.stderr else ""
        self.standby.release()
        if ready is None:
            return Availability("none", reason=failure or said or "the launcher did not start")
        abi, mounts = ready
        if abi < 1:
            return Availability("none", reason=_NO_LANDLOCK)
        if failure or code != 0 or error:
            why = failure or error or said or f"exit code {code}"
            return Availability("none", abi, reason=f"a confined command did not start: {why}")
        return _found(abi, None if mounts else _NO_MOUNTS)

    def run(self) -> Availability:
        """The trial, blocking (at most a few milliseconds, `_TIMEOUT` when stuck)."""
        try:
            self.standby.listen(_TIMEOUT)
            if self.standby.ready is not None and self.standby.ready[0] >= 1:
                self.standby.control.sendall(self.message(self.standby.ready[0]))
                self.standby.popen.wait(_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.standby.popen.kill()
            return self.verdict(str(exc))
        return self.verdict(None)

    async def _converse(self) -> None:
        loop = asyncio.get_running_loop()
        control = self.standby.control
        control.setblocking(False)
        while self.standby.ready is None:
            chunk = await loop.sock_recv(control, 64)
            if not chunk:
                return
            self.standby.heard(chunk)
        if self.standby.ready[0] >= 1:
            await loop.sock_sendall(control, self.message(self.standby.ready[0]))
            while chunk := await loop.sock_recv(control, 64):  # ends at exec
                self.standby.heard(chunk)
            await _exit_of(self.standby.pid)  # its mount namespace ends with it: milliseconds

    async def run_async(self) -> Availability:
        """The trial without blocking the loop."""
        try:
            await asyncio.wait_for(self._converse(), _TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            self.standby.popen.kill()
            return self.verdict(str(exc) or "timed out")
        return self.verdict(None)  # `true` exits within a millisecond of its exec


async def _exit_of(pid: int) -> None:
    """Wait until our child `pid` has exited (not reaped), without blocking the loop."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # no pidfds here: the verdict's wait blocks instead
        return
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await ended
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def _found(abi: int, missing_mounts: str | None) -> Availability:
    lacks = [] if abi >= 6 else ["Landlock ABI < 6: signals and abstract sockets not scoped"]
    if missing_mounts:
        lacks.append(
            f"{missing_mounts}: Landlock alone keeps .git read-only and deny_read unreadable, "
            "so commands cannot create files at the project's top level"
        )
    return Availability("landlock", abi, missing_mounts is None, "; ".join(lacks))


def _unsupported() -> Availability | None:
    """Why this system has no sandbox (None: Linux on a machine the filter knows)."""
    if sys.platform == "darwin":
        import shutil

        have = "sandbox-exec is there, but" if shutil.which("sandbox-exec") else "no sandbox-exec;"
        return Availability(
            "none", reason=f"{have} the Seatbelt profile (sandbox/seatbelt.py) is untested"
        )
    if sys.platform != "linux":
        return Availability("none", reason=f"no sandbox for {sys.platform}")
    if not seccomp.supported():
        return Availability("none", reason="seccomp filter not written for this machine")
    return None


def _try_in_python() -> str | None:
    """Start `true` under Landlock and seccomp from a forked child of ours; None if it ran."""
    from .launcher import Boundary, launch
    from .settings import Permissions

    boundary = Boundary(project=Path.cwd(), permissions=Permissions())
    try:
        run = launch(boundary, landlock.abi_version(), with_mounts=False)
    except OSError as exc:
        return f"Landlock ruleset refused: {exc}"
    try:
        subprocess.run(["true"], preexec_fn=run.preexec, check=True, timeout=10)  # noqa: PLW1509
    except (OSError, subprocess.SubprocessError) as exc:
        return f"a confined command did not start: {exc}"
    finally:
        run.close()
    return None


def _detect_in_python() -> Availability:
    """The probe without the native launcher: ctypes in this process, a fork of it."""
    from . import mounts

    abi = landlock.abi_version()
    if abi < 1:
        return Availability("none", reason=_NO_LANDLOCK)
    failure = _try_in_python()
    if failure is not None:
        return Availability("none", abi, reason=failure)
    return _found(abi, mounts.available())


def detect() -> Availability:
    """Probe the kernel (a few ms: starts `true` once); the result never changes while we run."""
    unsupported = _unsupported()
    if unsupported is not None:
        return unsupported
    program = native_launcher()
    if program is None:
        return _detect_in_python()
    try:
        return _Trial.begin(program).run()
    except OSError as exc:
        return Availability("none", reason=f"the sandbox's launcher did not start: {exc}")


async def detect_async() -> Availability:
    """`detect` without blocking the event loop (nor a thread, with the native launcher)."""
    unsupported = _unsupported()
    if unsupported is not None:
        return unsupported
    program = native_launcher()
    if program is None:
        return await asyncio.to_thread(_detect_in_python)
    try:
        trial = _Trial.begin(program)
    except OSError as exc:
        return Availability("none", reason=f"the sandbox's launcher did not start: {exc}")
    return await trial.run_async()


class Detector:
    """Probes on the first question (or `probe`), then gives the same answer; one made with
    `found` gives that answer and never probes."""

    def __init__(self, found: Availability | None = None) -> None:
        self._found = found

    @property
    def done(self) -> bool:
        """True once probed."""
        return self._found is not None

    async def probe(self) -> None:
        """Probe without blocking the loop, unless done already."""
        if self._found is None:
            found = await detect_async()
            if self._found is None:
                self._found = found

    def __call__(self) -> Availability:
        """What works here."""
        if self._found is None:
            self._found = detect()
        return self._found
