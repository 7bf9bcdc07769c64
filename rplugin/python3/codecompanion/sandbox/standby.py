"""The native launcher, started before its command: one waits per chat, already in the chat's
cgroup and its own mount namespace, and the next is started as soon as one is taken.

A launcher (confine.c) is a child of the host with its stdout and stderr piped (stdin too,
unless it inherits ours); the host keeps the process, so a taken launcher becomes the command
itself: same pid, same pipes, its exit status. The command is sent over a Unix socket pair;
the socket closes when the command is executed (or says why it could not be).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..priority import share
from .grants import Grant

# A launcher that has not said it is ready this long after it started is stuck (its cgroup,
# say): it is dropped and the command gets a fresh one.
_STUCK = 2.0
_CONTROL_TIMEOUT = 5.0  # seconds to hand a command over


def native_launcher() -> str | None:
    """The compiled launcher next to the host's Python (`make install` builds it with a C
    compiler); None: the child confines itself in Python, which costs a fork of the host."""
    path = os.path.join(os.path.dirname(sys.executable), "codecompanion-confine")
    return path if os.access(path, os.X_OK) else None


@dataclass(frozen=True)
class Order:
    """Everything the launcher needs to confine itself and execute one command."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    stdin_null: bool
    drop_caps: bool
    program: bytes | None  # the seccomp filter (None: none)
    ruleset: tuple[int, int, int, int]  # Landlock's attribute: fs, net, scoped, size
    grants: Sequence[Grant]
    read_only: Sequence[tuple[bytes, int]] = ()  # (path, mount flags to keep)
    hidden_dirs: Sequence[bytes] = ()
    hidden_files: Sequence[bytes] = ()

    def encode(self) -> bytes:
        """The message confine.c reads: a length, then NUL-terminated strings."""
        items: list[bytes] = [
            os.fsencode(self.cwd),
            str(int(self.stdin_null) | 2 * int(self.drop_caps)).encode(),
            self.program.hex().encode() if self.program else b"",
            *(str(n).encode() for n in self.ruleset),
            str(len(self.grants)).encode(),
        ]
        for path, rights in self.grants:
            items += [os.fsencode(path), str(rights).encode()]
        items.append(str(len(self.read_only)).encode())
        for mount, kept in self.read_only:
            items += [mount, str(kept).encode()]
        for group in (self.hidden_dirs, self.hidden_files):
            items += [str(len(group)).encode(), *group]
        items.append(str(len(self.env)).encode())
        items += [os.fsencode(f"{key}={value}") for key, value in self.env.items()]
        items += [os.fsencode(arg) for arg in self.argv]
        if any(b"\0" in item for item in items):
            raise ValueError("a NUL byte in the command, its environment or a path")
        payload = b"".join(item + b"\0" for item in items)
        return len(payload).to_bytes(4, sys.byteorder) + payload


class Standby:
    """One started launcher, waiting on its control socket."""

    def __init__(
        self,
        program: str,
        procs: int,
        namespace: int,
        stdin_pipe: bool,
        retired: Sequence[int] = (),
    ) -> None:
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fds = (child_end.fileno(), *((procs,) if procs >= 0 else ()), *retired)
        args = [program, str(child_end.fileno()), str(procs), str(namespace)]
        args += [str(os.getuid()), str(os.getgid()), *map(str, retired)]
        try:
            self.popen = subprocess.Popen(
                args,
                cwd="/",
                env={},
                stdin=subprocess.PIPE if stdin_pipe else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=fds,
            )
        except BaseException:
            host_end.close()
            raise
        finally:
            child_end.close()
        # A session of its own is a scheduling group of its own: it gets the host's priority
        # (the command it becomes keeps it).
        share("self", self.popen.pid)
        self.control = host_end
        self.started = time.monotonic()
        self.ready: tuple[int, bool] | None = None  # (Landlock ABI, in a mount namespace)
        self._heard = b""

    @property
    def pid(self) -> int:
        """The launcher's pid (the command's, once it is taken)."""
        return self.popen.pid

    def listen(self, wait: float = 0.0) -> None:
        """Read what the launcher said (up to `wait` seconds for more): "ready ABI MOUNTS"."""
        self.control.settimeout(wait)
        with contextlib.suppress(OSError):
            while self.ready is None:
                chunk = self.control.recv(64)
                if not chunk:
                    break
                self.heard(chunk)

    def heard(self, chunk: bytes) -> None:
        """Take in bytes the launcher wrote on its control socket."""
        self._heard += chunk
        if self.ready is not None:
            return
        line, newline, rest = self._heard.partition(b"\n")
        words = line.split()
        if newline and len(words) == 3 and words[0] == b"ready":
            self.ready = (int(words[1]), words[2] == b"1")
            self._heard = rest

    def usable(self) -> bool:
        """True while it waits and is not stuck."""
        if self.popen.poll() is not None:
            return False
        self.listen()
        return self.ready is not None or time.monotonic() - self.started < _STUCK

    def hold_namespace(self) -> int | None:
        """A hold on the mount namespace it entered (None: none entered yet, or gone), so
        that the command's exit does not tear the namespace down; see `Standbys.retire`."""
        if self.ready is None or not self.ready[1]:
            return None
        try:
            return os.open(f"/proc/{self.pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def hand_over(self, order: Order) -> None:
        """Send the command (OSError when the launcher is gone)."""
        self.control.settimeout(_CONTROL_TIMEOUT)
        self.control.sendall(order.encode())

    def exec_error(self) -> str | None:
        """Why the command could not be executed (None: it was, or the launcher failed first
        and said why on stderr)."""
        self.listen()
        self.control.settimeout(0)
        with contextlib.suppress(OSError):
            self.heard(self.control.recv(64))
        if self.ready is not None and len(self._heard) == 4:
            return os.strerror(int.from_bytes(self._heard, sys.byteorder))
        return None

    def drop(self) -> None:
        """End a launcher that was never taken (closing the socket alone makes it exit)."""
        self.control.close()
        with contextlib.suppress(OSError):
            self.popen.kill()
        self.release()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(1.0)  # killed: it ends within milliseconds (its namespace's teardown)

    def release(self) -> None:
        """Close the host's ends of its pipes and socket."""
        self.control.close()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        """Release the control socket of a taken launcher."""
        self.control.close()


@dataclass
class _Held:
    """What a chat's launchers hold: the waiting one, the namespace holds not dropped yet."""

    waiting: Standby | None = None
    retired: list[int] = field(default_factory=list)
    closed: bool = False

    def close(self) -> None:
        """Drop them all; nothing starts after."""
        self.closed = True
        if self.waiting is not None:
            self.waiting.drop()
            self.waiting = None
        for fd in self.retired:
            os.close(fd)
        self.retired = []


class Standbys:
    """A chat's waiting launcher: taken by a command, replaced at once, dropped at the end
    (or when the chat's sandbox is collected)."""

    def __init__(self, program: str, procs: int, namespace: int) -> None:
        self.program = program
        self.procs = procs  # the chat's cgroup.procs (-1: none)
        self.namespace = namespace
        self._held = _Held()
        self._finalizer = weakref.finalize(self, self._held.close)

    @property
    def spare(self) -> int | None:
        """The waiting launcher's pid: the cgroup's sweep after a command spares it."""
        waiting = self._held.waiting
        return waiting.pid if waiting is not None else None

    def fill(self) -> None:
        """Start the next launcher if none waits (OSError when it cannot start)."""
        held = self._held
        if held.waiting is None and not held.closed:
            retired, held.retired = held.retired, []
            try:
                held.waiting = Standby(self.program, self.procs, self.namespace, True, retired)
            finally:
                for fd in retired:  # the launcher has its own copies: it drops the last
                    os.close(fd)

    def retire(self, hold: int) -> None:
        """Keep a finished command's namespace hold for the next launcher to drop: the last
        hold on a mount namespace waits for an RCU grace period (tens of ms under load),
        which the waiting launcher can spend, not the command's exit nor the host's loop."""
        if self._held.closed:
            os.close(hold)
        else:
            self._held.retired.append(hold)

    def take(self, stdin_pipe: bool) -> Standby:
        """A launcher for one command: the waiting one if it is alive, else a fresh one."""
        if not stdin_pipe:  # it inherits our stdin: only a fresh launcher can
            return Standby(self.program, self.procs, self.namespace, False)
        waiting, self._held.waiting = self._held.waiting, None
        if waiting is not None and waiting.usable():
            return waiting
        if waiting is not None:
            waiting.drop()
        return Standby(self.program, self.procs, self.namespace, True)

    def close(self) -> None:
        """Drop the waiting launcher and the holds; nothing starts after."""
        self._finalizer()
