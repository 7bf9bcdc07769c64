"""The native launcher, started and confined before its command: one waits per chat, already
in the chat's cgroup, its own mount namespace and under the chat's rules (mounts, Landlock,
seccomp), and the next is started as soon as one's command runs.

A launcher (confine.c) is a child of the host with its stdout and stderr piped (stdin too,
unless it inherits ours); the host keeps the process, so a taken launcher becomes the command
itself: same pid, same pipes, its exit status. The rules and then the command are sent over a
Unix socket pair; the socket closes when the command is executed (or says why it could not be).
The rules hold nothing of the command, so only the command's own words are left to send and
read when it comes; a command whose rules differ (settings or the project's files changed
since) gets a fresh launcher told both at once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
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
_DROP_WAIT = 1.0  # seconds the host waits for a dropped launcher to end; later, a thread reaps it


# Where `private_temp` makes folders: the first that exists of what tempfile would try.
_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
_TEMP_FOLDERS = ("/tmp", "/var/tmp", "/usr/tmp")


def private_temp() -> str:
    """A new folder only we may use (0700), where `tempfile.mkdtemp` would make it.

    A waiting launcher gets one when a chat opens. tempfile (with shutil, which loads the bz2,
    lzma and zlib modules, and random) would add 0.8 MiB to a host whose chats run no command.
    """
    candidates = [os.environ.get(name) or "" for name in _TEMP_VARIABLES] + list(_TEMP_FOLDERS)
    root = os.path.abspath(next((c for c in candidates if c and os.path.isdir(c)), os.getcwd()))
    for _attempt in range(100):
        path = os.path.join(root, f"codecompanion-run-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name for a temporary folder in {root}")


def remove_temp(folder: str) -> None:
    """Remove a private temp folder and whatever is in it (nothing, for a launcher's unused one)."""
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return
    except OSError:
        import shutil  # only when a command left files: see private_temp

        shutil.rmtree(folder, ignore_errors=True)


def native_launcher() -> str | None:
    """The compiled launcher next to the host's Python (`make install` builds it with a C
    compiler); None: the child confines itself in Python, which costs a fork of the host."""
    path = os.path.join(os.path.dirname(sys.executable), "codecompanion-confine")
    return path if os.access(path, os.X_OK) else None


def _message(items: list[bytes]) -> bytes:
    """One message to confine.c: a length, then NUL-terminated strings."""
    if any(b"\0" in item for item in items):
        raise ValueError("a NUL byte in the command, its environment or a path")
    payload = b"".join(item + b"\0" for item in items)
    return len(payload).to_bytes(4, sys.byteorder) + payload


@dataclass(frozen=True)
class Rules:
    """What confines a launcher whatever its command: Landlock's ruleset and grants, the mount
    view and the seccomp filter. A waiting launcher applies them before its command comes."""

    grants: tuple[Grant, ...]  # besides the private temp folder
    temp_rights: int  # the rights on the private temp folder
    ruleset: tuple[int, int, int, int]  # Landlock's attribute: fs, net, scoped, size
    program: bytes | None  # the seccomp filter (None: none)
    read_only: tuple[tuple[bytes, int], ...] = ()  # (path, mount flags to keep)
    hidden_dirs: tuple[bytes, ...] = ()
    hidden_files: tuple[bytes, ...] = ()
    drop_caps: bool = True

    def granted(self, temp: str | None) -> list[Grant]:
        """Every grant, the private temp folder's included (None: there is none)."""
        return [*self.grants, *(((temp, self.temp_rights),) if temp is not None else ())]

    def message(self, temp: str | None) -> bytes:
        """The "confine" message confine.c reads."""
        grants = self.granted(temp)
        items: list[bytes] = [
            b"confine",
            str(2 * int(self.drop_caps)).encode(),
            self.program.hex().encode() if self.program else b"",
            *(str(n).encode() for n in self.ruleset),
            str(len(grants)).encode(),
        ]
        for path, rights in grants:
            items += [os.fsencode(path), str(rights).encode()]
        items.append(str(len(self.read_only)).encode())
        for mount, kept in self.read_only:
            items += [mount, str(kept).encode()]
        for group in (self.hidden_dirs, self.hidden_files):
            items += [str(len(group)).encode(), *group]
        return _message(items)


@dataclass(frozen=True)
class Order:
    """The command a confined launcher executes."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    stdin_null: bool

    def message(self) -> bytes:
        """The "run" message confine.c reads (ValueError: a NUL byte in it)."""
        items = [b"run", os.fsencode(self.cwd), str(int(self.stdin_null)).encode()]
        items.append(str(len(self.env)).encode())
        items += [os.fsencode(f"{key}={value}") for key, value in self.env.items()]
        items += [os.fsencode(arg) for arg in self.argv]
        return _message(items)


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
        self.rules: Rules | None = None  # what it was told to confine itself by
        self.temp: str | None = None  # the private temp folder those rules grant
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

    def confine(self, rules: Rules, temp: str | None) -> None:
        """Have it confine itself by `rules` now, before its command (OSError when gone)."""
        self.control.settimeout(_CONTROL_TIMEOUT)
        self.control.sendall(rules.message(temp))
        self.rules, self.temp = rules, temp

    def hand_over(self, command: bytes) -> None:
        """Send the command, an `Order.message()` (OSError when the launcher is gone); it
        was confined first."""
        assert self.rules is not None, "a launcher is confined before its command"
        self.control.settimeout(_CONTROL_TIMEOUT)
        self.control.sendall(command)

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
        try:  # killed: it ends within milliseconds (its namespace's teardown)...
            self.popen.wait(_DROP_WAIT)
        except subprocess.TimeoutExpired:  # ...unless a busy kernel delays that teardown
            reaper = threading.Thread(target=self.popen.wait, name=f"reap-{self.pid}")
            reaper.daemon = True
            reaper.start()

    def release(self) -> None:
        """Close the host's ends of its pipes and socket."""
        self.control.close()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        """Release the control socket of a taken launcher."""
        self.control.close()


def _discard(standby: Standby) -> None:
    """End a launcher nobody took, and remove the temp folder made for it."""
    standby.drop()
    if standby.temp is not None:
        remove_temp(standby.temp)


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
            _discard(self.waiting)
            self.waiting = None
        for fd in self.retired:
            os.close(fd)
        self.retired = []


class Standbys:
    """A chat's waiting launcher: confined ahead by the chat's rules, taken by a command,
    replaced at once, dropped at the end (or when the chat's sandbox is collected)."""

    def __init__(self, program: str, procs: int, namespace: int) -> None:
        self.program = program
        self.procs = procs  # the chat's cgroup.procs (-1: none)
        self.namespace = namespace
        self.rules: Rules | None = None  # what each launcher is confined by before its command
        self._held = _Held()
        self._finalizer = weakref.finalize(self, self._held.close)

    @property
    def spare(self) -> int | None:
        """The waiting launcher's pid: the cgroup's sweep after a command spares it."""
        waiting = self._held.waiting
        return waiting.pid if waiting is not None else None

    def prepare(self, rules: Rules) -> None:
        """Confine the waiting launcher (and those after it) by `rules` ahead of their command;
        one confined by other rules is replaced (OSError when none can start)."""
        self.rules = rules
        waiting = self._held.waiting
        if waiting is not None and waiting.rules not in (None, rules):
            self._held.waiting = None
            _discard(waiting)
        self.fill()
        waiting = self._held.waiting
        if waiting is not None and waiting.rules is None:
            self._confine(waiting, rules)

    def fill(self) -> None:
        """Start the next launcher if none waits, confined by the chat's rules once they are
        known (OSError when it cannot start)."""
        held = self._held
        if held.waiting is None and not held.closed:
            retired, held.retired = held.retired, []
            try:
                held.waiting = Standby(self.program, self.procs, self.namespace, True, retired)
            finally:
                for fd in retired:  # the launcher has its own copies: it drops the last
                    os.close(fd)
            if self.rules is not None:
                self._confine(held.waiting, self.rules)

    def _confine(self, standby: Standby, rules: Rules) -> None:
        temp = private_temp()
        try:
            standby.confine(rules, temp)
        except OSError:
            remove_temp(temp)  # it is gone: the next `take` replaces it

    def retire(self, hold: int) -> None:
        """Keep a finished command's namespace hold for the next launcher to drop: the last
        hold on a mount namespace waits for an RCU grace period (tens of ms under load),
        which the waiting launcher can spend, not the command's exit nor the host's loop."""
        if self._held.closed:
            os.close(hold)
        else:
            self._held.retired.append(hold)

    def take(self, rules: Rules) -> Standby | None:
        """The waiting launcher if it lives and was confined by exactly `rules` (its temp
        folder goes with it) or not at all yet, else None: the command then needs a fresh
        one. Rules that changed (the settings, the project's files) confine the next ones."""
        waiting, self._held.waiting = self._held.waiting, None
        self.rules = rules
        if waiting is not None and waiting.rules in (None, rules) and waiting.usable():
            return waiting
        if waiting is not None:
            _discard(waiting)
        return None

    def fresh(self, stdin_pipe: bool) -> Standby:
        """A launcher started now in the chat's cgroup, not confined yet."""
        return Standby(self.program, self.procs, self.namespace, stdin_pipe)

    def close(self) -> None:
        """Drop the waiting launcher and the holds; nothing starts after."""
        self._finalizer()
