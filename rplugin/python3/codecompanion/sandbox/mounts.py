"""The command's own mount namespace: git's folder and the plugin's files read-only, secrets hidden.

Landlock only adds rights, so a folder inside the writable project cannot be taken back, nor a
secret inside a readable home. A private mount namespace can: a read-only bind mount over
`.git` (EROFS, even for root) and an empty read-only tmpfs (or /dev/null) over each denied path.
Landlock then forbids the command to change these mounts back.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from typing import Any

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
# statvfs flags that are also mount flags a remount inside a user namespace must keep.
_KEPT = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | 16 | 64 | 1024 | 2048 | 4096


def load_libc() -> None:
    """Load libc through ctypes now, in the host: a forked child must not load libraries."""
    _libc()


@functools.cache
def _libc() -> Any:
    """libc through ctypes: only where a child enters the view in Python (no native launcher)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class MountView:
    """What to change in the command's view; prepared in the host, entered in the child."""

    read_only: tuple[tuple[bytes, int], ...]  # (path, flags to keep)
    hidden_dirs: tuple[bytes, ...]
    hidden_files: tuple[bytes, ...]
    user_namespace: bool  # not root: a user namespace makes the mount namespace possible
    ids: tuple[int, int]

    def enter(self) -> None:
        """Unshare and mount (in the child, before Landlock); OSError if the kernel refuses."""
        flags = _CLONE_NEWNS | (_CLONE_NEWUSER if self.user_namespace else 0)
        libc = _libc()
        _mount = libc.mount
        _check(libc.unshare(flags), "unshare")
        if self.user_namespace:
            _map_ids(*self.ids)
        _check(_mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "private /")
        for path, kept in self.read_only:
            _check(_mount(path, path, None, _MS_BIND | _MS_REC, None), "bind")
            remount = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept
            _check(_mount(None, path, None, remount, None), "read-only")
        hidden = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        for path in self.hidden_dirs:
            _check(_mount(b"none", path, b"tmpfs", hidden, b"size=4k,mode=0500"), "hide")
        for path in self.hidden_files:
            _check(_mount(b"/dev/null", path, None, _MS_BIND, None), "hide")


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes  # loaded already: _libc() ran

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _map_ids(uid: int, gid: int) -> None:
    """Be the same user inside the new user namespace (no other ids exist there)."""
    maps = (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1"))
    for name, text in maps:
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def plan(read_only: list[str], deny_read: list[str], writable: tuple[str, ...]) -> MountView:
    """The view for these settings: only existing paths; read-only only inside writable roots."""
    kept: list[tuple[bytes, int]] = []
    roots = tuple(os.path.realpath(os.path.expanduser(root)) for root in writable)
    for path in read_only:
        real = os.path.realpath(path)
        if os.path.lexists(path) and _inside(real, roots):
            kept.append((real.encode(), int(os.statvfs(real).f_flag) & _KEPT))
    dirs: list[bytes] = []
    files: list[bytes] = []
    for path in deny_read:
        wanted = os.path.expanduser(path)
        try:  # most are absent: one call finds out, where resolving walks each component
            found = os.stat(wanted)
        except OSError:
            continue
        hidden = os.path.realpath(wanted).encode()
        (dirs if stat.S_ISDIR(found.st_mode) else files).append(hidden)
    root = os.geteuid() == 0
    return MountView(tuple(kept), tuple(dirs), tuple(files), not root, (os.getuid(), os.getgid()))


def available() -> str | None:
    """None when a child can have its own mount namespace here, else why not."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only reports through its exit code
        try:
            plan([], [], ()).enter()
        except OSError:
            os._exit(1)
        os._exit(0)
    _pid, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        return None
    return "no mount namespace (user namespaces are off for this user, or refused by a policy)"
