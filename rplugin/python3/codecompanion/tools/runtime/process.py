"""Running a subprocess without blocking: own process group, no stdin, timeout, output caps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .child import Child, Sink, spawn
from .child_env import RUN_MARKER, EnvPolicy
from .descendants import kill_marked, run_id
from .groupwatch import group_watch

if TYPE_CHECKING:
    from ...sandbox.launcher import Launch
    from ...sandbox.process_cap import PidCgroup, ProcessCap

TERM_GRACE = 1.0  # seconds between SIGTERM and SIGKILL
PIPE_GRACE = 0.5  # seconds to wait for pipes held open by background children after exit
_POLL = 0.02
TIDY_DELAY = 0.05  # seconds after a run's end before `_tidy`


@dataclass(frozen=True)
class FinishedProcess:
    """What a finished (or killed) process produced.

    `exit_code` is None when the process was killed on timeout or could not be started
    (then `started` is False and `stderr` says why); a negative code means it died from that
    signal. A cancelled run has no result: `run_process` re-raises CancelledError after killing
    the group.
    """

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration: float
    raw_stdout: bytes = b""
    started: bool = True


def _live_members(pgid: int) -> bool:
    """True if /proc shows a member of the group that is not a zombie (True without /proc)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    """True while a process of the group runs (zombies awaiting their reaper do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _live_members(pgid)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send `sig` to the group, ignoring a group that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_group(pgid: int, grace: float = TERM_GRACE) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after `grace` seconds."""
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    try:
        while group_alive(pgid) and time.monotonic() < deadline:
            await asyncio.sleep(_POLL)
    finally:
        # Runs even if this wait is itself cancelled, so nothing outlives us.
        if group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)


async def _reap(child: Child) -> int | None:
    """Wait for the direct child (bounded) and return its exit code."""
    await child.wait_exit(TERM_GRACE + 1.0)
    return child.returncode


def _child_env(env: Mapping[str, str] | None, marker: str) -> dict[str, str]:
    """The child's environment: `env` (None: ours without secrets) marked with this run."""
    base = EnvPolicy().environment() if env is None else env
    merged = {str(k): str(v) for k, v in base.items() if not str(k).startswith(RUN_MARKER)}
    merged[RUN_MARKER] = marker
    return merged


def _start(
    args: tuple[str, ...],
    cwd: str | Path,
    env: Mapping[str, str],
    stdin: int | None,
    sinks: tuple[Sink, Sink],
    stdin_data: bytes | None,
    sandbox: Launch | None,
    cap: ProcessCap | None,
) -> Child:
    """Start the process and guard its group; nothing awaits in between, so no cancel lands.

    In a sandbox the native launcher becomes the command: a waiting one, guarded, watched and
    capped before it is given `args`, the last step (it then runs at once). Else the forked
    child confines and caps itself before it executes `args`.
    """
    native = sandbox is not None and sandbox.native is not None
    if sandbox is not None and native:
        popen = sandbox.begin(args, str(cwd), env, stdin)
        if cap is not None:
            cap.apply(popen.pid)
    else:
        popen = spawn(args, cwd, env, stdin, _preexec(sandbox, cap))
    group_watch().add(popen.pid)  # from here on the group dies with us, however we end
    child = Child(popen, *sinks, stdin_data)
    if sandbox is not None and native:
        sandbox.go()
    return child


def _preexec(sandbox: Launch | None, cap: ProcessCap | None) -> Callable[[], None] | None:
    """What the forked child does before it executes the command: cap, then confine itself."""
    if sandbox is None:
        return cap.preexec if cap is not None else None
    if cap is None:
        return sandbox.preexec
    launch = sandbox

    def both() -> None:
        cap.preexec()
        launch.preexec()

    return both


def _join(sandbox: Launch | None, cap: ProcessCap | None) -> PidCgroup | None:
    """The chat's cgroup the run's processes go in (None: not in one), told a run starts."""
    group = sandbox.cgroup if sandbox is not None else cap.cgroup if cap is not None else None
    if group is not None:
        group.joined()
    return group


def _not_started(group: PidCgroup | None, sandbox: Launch | None, cap: ProcessCap | None) -> None:
    """The command could not start: its launcher, temp folder and place in the cgroup go."""
    if sandbox is not None:
        sandbox.close()
        sandbox.remove_temp()
    _leave(group, sandbox, cap)


def _leave(group: PidCgroup | None, sandbox: Launch | None, cap: ProcessCap | None) -> None:
    """The run ended: the chat's last running command empties its cgroup, sparing the
    sandbox's waiting launcher."""
    if group is None:
        return
    if sandbox is not None and sandbox.standbys is not None:
        group.left(sandbox.standbys.spare)
    else:
        group.left(cap.spare() if cap is not None else None)


def _release(pgid: int) -> None:
    """Stop guarding a group that has ended (one that lives on stays guarded)."""
    if not group_alive(pgid):
        group_watch().remove(pgid)


def _tidy(pgid: int, sandbox: Launch | None) -> None:
    """After a run: stop guarding its ended group, remove its private temp folder."""
    _release(pgid)
    if sandbox is not None:
        sandbox.remove_temp()


def _tidy_soon(pgid: int, sandbox: Launch | None) -> None:
    """`_tidy` a moment after the run's end: telling the watchdog wakes its process and the
    folder's removal a worker thread, and the result's next request (written within
    milliseconds of the result) goes first."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _tidy(pgid, sandbox)
        return
    loop.call_later(TIDY_DELAY, _tidy, pgid, sandbox)


async def _supervise(child: Child, timeout: float | None) -> tuple[bool, int | None]:
    """Wait until the process ends or times out and its pipes close: (timed out, exit code)."""
    pgid = child.pid
    timed_out = False
    try:
        if not await child.wait_exit(timeout):
            timed_out = True
            await kill_group(pgid)
        # Background children may still hold the pipes open after the command exited.
        if not await child.wait_drained(PIPE_GRACE):
            await kill_group(pgid)
            await child.wait_drained(PIPE_GRACE)
        return timed_out, await _reap(child)
    except asyncio.CancelledError:
        await kill_group(pgid)
        await _reap(child)
        raise
    finally:
        child.close()


def _sinks(given: tuple[Sink, Sink] | None, max_output: int) -> tuple[Sink, Sink]:
    """The caller's sinks, else one per stream capped at `max_output` bytes."""
    if given is not None:
        return given
    return Sink(max_output, bytearray()), Sink(max_output, bytearray())


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    timeout: float | None = 300.0,
    env: Mapping[str, str] | None = None,
    max_output: int = 1_000_000,
    stdin_devnull: bool = True,
    stdin_data: bytes | None = None,
    sandbox: Launch | None = None,
    sinks: tuple[Sink, Sink] | None = None,
    cap: ProcessCap | None = None,
) -> FinishedProcess:
    """Run `argv` in its own session; kill its whole group on timeout or cancellation.

    `env` is the child's whole environment (None: ours without keys, tokens and Neovim's
    socket; see child_env); every process the run starts is marked through it, and whatever
    still carries the mark when the run ends is killed, `setsid` children included. Output
    beyond `max_output` bytes per stream is dropped (and `truncated` set) while reading goes
    on. On cancellation the group is killed and `CancelledError` re-raised.
    `stdin_devnull=False` inherits our stdin (never do that inside the Neovim host: its stdin
    is the RPC channel); `stdin_data` is written to the child's stdin instead. With `sandbox`
    the child confines itself before it executes `argv` (and gets the run's private temp).
    `sinks` (stdout's, stderr's) take the output as it comes instead of `max_output`'s own.
    `cap` holds the run and all it starts to the chat's process cap (sandbox/process_cap.py).
    """
    args = tuple(str(a) for a in argv)
    started = time.monotonic()
    if not args:
        return FinishedProcess(args, None, "", "no command given", False, False, 0.0, started=False)
    marker = run_id(group_watch().token)
    out, err = _sinks(sinks, max_output)
    stdin = subprocess.DEVNULL if stdin_devnull else None
    if stdin_data is not None:
        stdin = subprocess.PIPE
    child_env = _child_env(env, marker)
    if sandbox is not None:
        child_env.update(sandbox.env)
    group = _join(sandbox, cap)
    try:
        child = _start(args, cwd, child_env, stdin, (out, err), stdin_data, sandbox, cap)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:  # ValueError: a NUL byte
        message = f"cannot start {args[0]!r}: {getattr(exc, 'strerror', None) or exc}"
        _not_started(group, sandbox, cap)
        return FinishedProcess(args, None, "", message, False, False, 0.0, started=False)
    except BaseException:
        _not_started(group, sandbox, cap)
        raise
    failed: str | None = None
    try:
        timed_out, code = await _supervise(child, timeout)
    finally:
        # In the loop, not a thread, and no await here that a second cancel could cut short.
        # A confined run's processes are all in the chat's cgroup (none can leave it): its
        # sweep kills every one of them, marked or not, so no environment is read.
        if sandbox is not None:
            failed = sandbox.exec_error()
            sandbox.close()
        if sandbox is None or sandbox.cgroup is None:
            kill_marked(marker, since=child.pid)  # ~2 ms for a few hundred processes
        _leave(group, sandbox, cap)
        _tidy_soon(child.pid, sandbox)
    if failed is not None:  # the launcher ran, the command could not start (as Popen says)
        message = f"cannot start {args[0]!r}: {failed}"
        return FinishedProcess(args, None, "", message, False, False, 0.0, started=False)
    return FinishedProcess(
        argv=args,
        exit_code=None if timed_out else code,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        truncated=bool(out.dropped or err.dropped),
        duration=time.monotonic() - started,
        raw_stdout=bytes(out.data),
    )
