"""Running a subprocess without blocking: own process group, no stdin, timeout, output caps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .child_env import RUN_MARKER, EnvPolicy
from .descendants import kill_marked, run_id
from .groupwatch import group_watch

_CHUNK = 65536
TERM_GRACE = 1.0  # seconds between SIGTERM and SIGKILL
PIPE_GRACE = 0.5  # seconds to wait for pipes held open by background children after exit
_POLL = 0.02


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or killed) process produced.

    `exit_code` is None when the process was killed on timeout or could not be started
    (then `stderr` says why); a negative code means it died from that signal. A cancelled run
    has no result: `run_process` re-raises CancelledError after killing the group.
    """

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration: float
    raw_stdout: bytes = b""


@dataclass
class _Sink:
    """Bytes read from one stream, up to a cap; the rest is counted and dropped."""

    limit: int
    data: bytearray
    dropped: int = 0

    def feed(self, chunk: bytes) -> None:
        """Keep what fits under the cap, count the rest."""
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The kept bytes decoded as UTF-8 (bad bytes replaced)."""
        return self.data.decode("utf-8", errors="replace")


async def _drain(stream: asyncio.StreamReader | None, sink: _Sink) -> None:
    """Read a stream to EOF into `sink`, never stopping early so the child never blocks."""
    if stream is None:
        return
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return
        sink.feed(chunk)


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


async def _finish_readers(readers: list[asyncio.Task[None]], wait: float) -> None:
    """Give the readers `wait` seconds to reach EOF, then cancel them."""
    _done, pending = await asyncio.wait(readers, timeout=wait)
    for task in pending:
        task.cancel()
    for task in readers:
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _wait_exit(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
    """Return once the direct child has exited, even if its children keep the pipes open."""
    while proc.returncode is None:
        pending = [task for task in readers if not task.done()]
        if not pending:
            # asyncio's wait() also waits for the pipes to close; they are closed now.
            await proc.wait()
            return
        await asyncio.wait(pending, timeout=_POLL)


async def _reap(proc: asyncio.subprocess.Process) -> int | None:
    """Wait for the direct child (bounded) and return its exit code."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_wait_exit(proc, []), timeout=TERM_GRACE + 1.0)
    return proc.returncode


def _child_env(env: Mapping[str, str] | None, marker: str) -> dict[str, str]:
    """The child's environment: `env` (None: ours without secrets) marked with this run."""
    base = EnvPolicy().environment() if env is None else env
    merged = {str(k): str(v) for k, v in base.items() if not str(k).startswith(RUN_MARKER)}
    merged[RUN_MARKER] = marker
    return merged


async def _spawn(
    args: tuple[str, ...], cwd: str | Path, env: Mapping[str, str] | None, stdin: int | None
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *args,
        cwd=str(cwd),
        env=env,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )


async def _spawn_watched(
    args: tuple[str, ...], cwd: str | Path, env: Mapping[str, str] | None, stdin: int | None
) -> asyncio.subprocess.Process:
    proc = await _spawn(args, cwd, env, stdin)
    group_watch().add(proc.pid)  # from here on the group dies with us, however we end
    return proc


async def _start(
    args: tuple[str, ...], cwd: str | Path, env: Mapping[str, str] | None, stdin: int | None
) -> asyncio.subprocess.Process:
    """Start the process; a cancel while starting still kills what was started, group and all."""
    spawn = asyncio.ensure_future(_spawn_watched(args, cwd, env, stdin))
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            started = await spawn
            await kill_group(started.pid)
            await _reap(started)
            if env is not None:
                kill_marked(env[RUN_MARKER], since=started.pid)
            _release(started.pid)
        raise


def _release(pgid: int) -> None:
    """Stop guarding a group that has ended (one that lives on stays guarded)."""
    if not group_alive(pgid):
        group_watch().remove(pgid)


async def _feed(stream: asyncio.StreamWriter | None, data: bytes | None) -> None:
    """Write `data` to the child's stdin and close it (a child that stops reading is fine)."""
    if stream is None or data is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    stream.close()


async def _supervise(
    proc: asyncio.subprocess.Process,
    out: _Sink,
    err: _Sink,
    timeout: float | None,
    stdin_data: bytes | None = None,
) -> tuple[bool, int | None]:
    """Read both streams until the process ends or times out: (timed out, exit code)."""
    readers = [
        asyncio.ensure_future(_drain(proc.stdout, out)),
        asyncio.ensure_future(_drain(proc.stderr, err)),
        asyncio.ensure_future(_feed(proc.stdin, stdin_data)),
    ]
    pgid = proc.pid
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_wait_exit(proc, readers), timeout=timeout)
        except asyncio.TimeoutError:
            timed_out = True
            await kill_group(pgid)
        # Background children may still hold the pipes open after the command exited.
        _done, pending = await asyncio.wait(readers, timeout=PIPE_GRACE)
        if pending:
            await kill_group(pgid)
        await _finish_readers(readers, PIPE_GRACE)
        return timed_out, await _reap(proc)
    except asyncio.CancelledError:
        try:
            await kill_group(pgid)
        finally:
            for task in readers:
                task.cancel()
        await _reap(proc)
        raise


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    timeout: float | None = 300.0,
    env: Mapping[str, str] | None = None,
    max_output: int = 1_000_000,
    stdin_devnull: bool = True,
    stdin_data: bytes | None = None,
) -> ProcessResult:
    """Run `argv` in its own session; kill its whole group on timeout or cancellation.

    `env` is the child's whole environment (None: ours without keys, tokens and Neovim's
    socket; see child_env); every process the run starts is marked through it, and whatever
    still carries the mark when the run ends is killed, `setsid` children included. Output
    beyond `max_output` bytes per stream is dropped (and `truncated` set) while reading goes
    on. On cancellation the group is killed and `CancelledError` re-raised.
    `stdin_devnull=False` inherits our stdin (never do that inside the Neovim host: its stdin
    is the RPC channel); `stdin_data` is written to the child's stdin instead.
    """
    args = tuple(str(a) for a in argv)
    started = time.monotonic()
    if not args:
        return ProcessResult(args, None, "", "no command given", False, False, 0.0)
    marker = run_id(group_watch().token)
    try:
        stdin = asyncio.subprocess.DEVNULL if stdin_devnull else None
        if stdin_data is not None:
            stdin = asyncio.subprocess.PIPE
        proc = await _start(args, cwd, _child_env(env, marker), stdin)
    except OSError as exc:
        message = f"cannot start {args[0]!r}: {exc.strerror or exc}"
        return ProcessResult(args, None, "", message, False, False, 0.0)
    out, err = _Sink(max_output, bytearray()), _Sink(max_output, bytearray())
    try:
        timed_out, code = await _supervise(proc, out, err, timeout, stdin_data)
    finally:
        # In the loop, not a thread: ~2 ms for a few hundred processes, and no await here
        # that a second cancel could cut short.
        kill_marked(marker, since=proc.pid)
        _release(proc.pid)
    return ProcessResult(
        argv=args,
        exit_code=None if timed_out else code,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        truncated=bool(out.dropped or err.dropped),
        duration=time.monotonic() - started,
        raw_stdout=bytes(out.data),
    )


def cap_output(text: str, limit: int = 50_000) -> tuple[str, bool]:
    """Keep the head and tail of `text` within `limit` characters, with a note of what was cut."""
    if len(text) <= limit:
        return text, False
    head_size = limit // 2
    tail_size = limit - head_size
    head = text[:head_size]
    tail = text[len(text) - tail_size :]
    # Prefer cutting at line ends when one is near, so no half lines are shown.
    newline = head.rfind("\n")
    if newline >= head_size * 4 // 5:
        head = head[: newline + 1]
    newline = tail.find("\n")
    if 0 <= newline <= tail_size // 5:
        tail = tail[newline + 1 :]
    cut = len(text) - len(head) - len(tail)
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}[... {cut} characters cut ...]\n{tail}", True
