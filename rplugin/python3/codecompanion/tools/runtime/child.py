"""A started process watched by the event loop itself: its exit through a pidfd, its pipes by
readers on their file descriptors.

asyncio's subprocesses cost a thread per child (the child watcher), a transport and a protocol
per pipe, and several trips through the loop to start and to finish; a tool command pays all of
it between the model's answer and the next request. Here the loop watches the pipes and a pidfd
(Linux 5.3 and later) directly, and the child is reaped in the callback that sees it exit.
Without pidfds (older kernels, other systems) one thread per child waits for the exit instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ...priority import share

_CHUNK = 262144  # bytes per read: a full pipe in one go


@dataclass
class Sink:
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


async def _settled(future: asyncio.Future[Any], timeout: float | None) -> bool:
    """Wait up to `timeout` seconds for `future` (never cancelling it); True if it is done."""
    if not future.done():  # asyncio.wait would still take a trip through the loop
        await asyncio.wait({future}, timeout=timeout)
    return future.done()


def spawn(
    args: tuple[str, ...],
    cwd: str | Path,
    env: Mapping[str, str] | None,
    stdin: int | None,
    confine: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start `args` in a new session with stdout and stderr piped (OSError if it cannot start).

    `confine` runs in the child between fork and exec: the in-Python sandbox launcher confines
    the child itself there, never this process.
    """
    popen = subprocess.Popen(
        args,
        cwd=str(cwd),
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=confine,  # noqa: PLW1509 - only prepared system calls run there
    )
    # A session of its own is a scheduling group of its own: it gets the host's priority.
    share("self", popen.pid)
    return popen


class Child:
    """A running process: `exited` resolves to its exit code, `drained` once its pipes closed.

    The exit code is negative when a signal ended the process. Output goes to the two sinks as
    it arrives; `stdin_data` (stdin must be a pipe then) is written and the pipe closed.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        out: Sink,
        err: Sink,
        stdin_data: bytes | None = None,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.popen = popen
        self.pid = popen.pid
        self.exited: asyncio.Future[int] = self.loop.create_future()
        self.drained: asyncio.Future[None] = self.loop.create_future()
        self._readers: dict[int, tuple[IO[bytes], Sink]] = {}
        self._writer: tuple[IO[bytes], memoryview] | None = None
        self._pidfd = -1
        for stream, sink in ((popen.stdout, out), (popen.stderr, err)):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                self._readers[stream.fileno()] = (stream, sink)
                self.loop.add_reader(stream.fileno(), self._read, stream.fileno())
        if popen.stdin is not None:
            self._writer = (popen.stdin, memoryview(stdin_data or b""))
            os.set_blocking(popen.stdin.fileno(), False)
            self._write()
        self._check_drained()
        self._watch_exit()

    @property
    def returncode(self) -> int | None:
        """The exit code once the process was reaped, else None."""
        return self.exited.result() if self.exited.done() else None

    async def wait_exit(self, timeout: float | None) -> bool:
        """Wait up to `timeout` seconds for the process to exit; True if it has."""
        return await _settled(self.exited, timeout)

    async def wait_drained(self, timeout: float | None) -> bool:
        """Wait up to `timeout` seconds for every pipe to close; True if they have."""
        return await _settled(self.drained, timeout)

    def close(self) -> None:
        """Stop reading and writing (what is unread is dropped); the exit is still awaited."""
        for fd in list(self._readers):
            self._close_reader(fd)
        self._close_writer()

    # ----- pipes ----------------------------------------------------------------------------

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if chunk:
            self._readers[fd][1].feed(chunk)
            return
        self._close_reader(fd)
        self._check_drained()

    def _close_reader(self, fd: int) -> None:
        stream, _sink = self._readers.pop(fd)
        self.loop.remove_reader(fd)
        stream.close()

    def _write(self) -> None:
        assert self._writer is not None
        stream, rest = self._writer
        try:
            while rest:
                rest = rest[os.write(stream.fileno(), rest) :]
        except (BlockingIOError, InterruptedError):
            self._writer = (stream, rest)
            self.loop.add_writer(stream.fileno(), self._write_more)
            return
        except OSError:  # the child closed its stdin or ended: what it did not read is dropped
            pass
        self._close_writer()
        self._check_drained()

    def _write_more(self) -> None:
        assert self._writer is not None
        self.loop.remove_writer(self._writer[0].fileno())
        self._write()

    def _close_writer(self) -> None:
        if self._writer is None:
            return
        stream = self._writer[0]
        self._writer = None
        self.loop.remove_writer(stream.fileno())
        with contextlib.suppress(OSError):
            stream.close()

    def _check_drained(self) -> None:
        if not self._readers and self._writer is None and not self.drained.done():
            self.drained.set_result(None)

    # ----- exit -----------------------------------------------------------------------------

    def _watch_exit(self) -> None:
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfds here: a thread waits instead
            waiter = threading.Thread(target=self._wait_blocking, name=f"wait-{self.pid}")
            waiter.daemon = True
            waiter.start()
            return
        self.loop.add_reader(self._pidfd, self._on_pidfd)

    def _on_pidfd(self) -> None:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: the code is lost
            pid, status = self.pid, 255 << 8
        if pid == 0:
            return
        self.loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = -1
        self._exited(os.waitstatus_to_exitcode(status))

    def _wait_blocking(self) -> None:
        try:
            _pid, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 255 << 8
        code = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            self.loop.call_soon_threadsafe(self._exited, code)

    def _exited(self, code: int) -> None:
        # Popen must not wait for (or warn about) a process reaped here.
        self.popen.returncode = code
        if not self.exited.done():
            self.exited.set_result(code)
