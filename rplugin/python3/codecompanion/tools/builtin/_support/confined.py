"""Race-free opens of checked paths: each folder is entered with O_NOFOLLOW, regular files only.

A path is checked once (resolved with realpath and compared with the project root), but a process
in the project can swap a folder on that path for a symbolic link before the file is opened.
Walking the resolved path one component at a time, each relative to its parent's descriptor and
never following a link, opens exactly the object at the checked path or fails: a link that
appeared meanwhile is an error, not a detour. Everything else here is built on that walk.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ....errors import ToolError

# O_PATH enters folders that can be searched but not listed (mode 0711), like a path lookup does.
_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def link_appeared(shown: str) -> ToolError:
    """The error for a path that went through a symbolic link when it was opened."""
    return ToolError(
        f"{shown} changed while it was being opened (its path now goes through a symbolic "
        "link); nothing was read or written. Try again."
    )


def not_regular(shown: str, mode: int) -> ToolError:
    """The error for a path that names a folder, FIFO, socket or device."""
    kind = next((name for test, name in _KINDS if test(mode)), "not a plain file")
    return ToolError(f"{shown} is {kind}, not a regular file; the tools open regular files only.")


def is_read_only(info: os.stat_result) -> bool:
    """True for a file or folder without any write permission bit (read-only even for root)."""
    return info.st_mode & 0o222 == 0


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _enter(parent: int, name: str, shown: str) -> int:
    """The descriptor of folder `name` in `parent`; a link or a file there is an error."""
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
    if _is_link(parent, name):
        raise link_appeared(shown)
    raise ToolError(f"A parent of {shown} is a file, not a folder.")


def _make(parent: int, name: str, shown: str) -> None:
    """Create folder `name` in `parent` unless the parent is read-only."""
    if is_read_only(os.fstat(parent)):
        raise ToolError(f"Cannot create {shown}: a folder on its path is read-only.")
    try:
        os.mkdir(name, 0o777, dir_fd=parent)
    except FileExistsError:
        pass  # made meanwhile; entering it checks what it is
    except PermissionError:
        raise ToolError(f"Permission denied creating a folder for {shown}.") from None


def _step(parent: int, name: str, shown: str, create: bool) -> int:
    try:
        return _enter(parent, name, shown)
    except FileNotFoundError:
        if not create:
            raise ToolError(f"No such file or directory: {shown}") from None
    _make(parent, name, shown)
    return _enter(parent, name, shown)


def open_folder(folder: Path, shown: str, *, create: bool = False) -> int:
    """A descriptor of the resolved absolute `folder`, reached without following any link.

    With `create`, missing folders are made (never inside a read-only one). `shown` names the
    path in errors. Raises ToolError; the caller closes the descriptor.
    """
    if not folder.is_absolute() or ".." in folder.parts:
        raise ValueError(f"open_folder needs a resolved absolute path, not {folder}")
    fd = os.open("/", _FOLDER_FLAGS)
    try:
        for name in folder.parts[1:]:
            child = _step(fd, name, shown, create)
            os.close(fd)
            fd = child
    except PermissionError:
        os.close(fd)
        raise ToolError(f"Permission denied opening a folder on the path of {shown}.") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def stat_entry(dir_fd: int, name: str, shown: str) -> os.stat_result:
    """The status of regular file `name` in `dir_fd`, not following a link; else ToolError."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ToolError(f"No such file or directory: {shown}") from None
    except NotADirectoryError:
        raise ToolError(f"A parent of {shown} is a file, not a folder.") from None
    if stat.S_ISLNK(info.st_mode):
        raise link_appeared(shown)
    if not stat.S_ISREG(info.st_mode):
        raise not_regular(shown, info.st_mode)
    return info


def open_entry(dir_fd: int, name: str, shown: str, flags: int) -> tuple[int, os.stat_result]:
    """Open regular file `name` in `dir_fd` with `flags`; the descriptor and its status.

    The entry is checked before it is opened, so a FIFO or device is never opened, and the
    opened file is checked to be the one that was checked.
    """
    before = stat_entry(dir_fd, name, shown)
    try:
        fd = os.open(name, flags | _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_appeared(shown) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(shown, info.st_mode)
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            raise ToolError(f"{shown} was replaced while it was being opened; try again.")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_file(path: Path, shown: str, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """Open the regular file at the resolved absolute `path` with no link followed on the way.

    Returns the descriptor (the caller closes it) and its status. Raises ToolError for a link
    on the path, a missing, unreadable or non-regular file; OSError for other failures.
    """
    folder = open_folder(path.parent, shown)
    try:
        return open_entry(folder, path.name, shown, flags)
    except PermissionError:
        raise ToolError(f"Permission denied opening {shown}.") from None
    finally:
        os.close(folder)


def read_all(fd: int, limit: int, shown: str) -> bytes:
    """Everything from `fd`'s position to its end; ToolError past `limit` bytes."""
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, 1 << 20):
        total += len(chunk)
        if total > limit:
            raise ToolError(f"{shown} is over the {limit:,}-byte limit.")
        chunks.append(chunk)
    return b"".join(chunks)


def read_file(path: Path, shown: str, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` (opened as open_file does) and its status."""
    fd, info = open_file(path, shown)
    try:
        if info.st_size > limit:
            raise ToolError(f"{shown} is {info.st_size:,} bytes, over the {limit:,}-byte limit.")
        return read_all(fd, limit, shown), info
    finally:
        os.close(fd)


def file_identity(path: Path, shown: str) -> tuple[int, int]:
    """(device, inode) of the regular file at `path`, opened as open_file does."""
    fd, info = open_file(path, shown)
    os.close(fd)
    return info.st_dev, info.st_ino
