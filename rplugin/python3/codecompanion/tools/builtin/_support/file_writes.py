"""Writing files for the file tools: never a read-only file, keeping mode, owner and hard links.

An atomic replace (a temp file renamed over the old name) only needs write permission on the
folder, so by itself it would replace a file the user cannot write, drop the file's owner, and
split a hard link from its other names. Here a file is replaced only when the replacement can be
made identical in mode and owner and the file has a single name; otherwise it is rewritten in
place through a descriptor opened for writing, which the kernel's permission check guards.
"""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import contextlib
import errno
import os
from pathlib import Path

from ....errors import ToolError
from .confined import is_read_only, open_entry, open_folder, read_all, stat_entry

MAX_CHECK_BYTES = 64_000_000
# A temp name that cannot be made (name too long, folder not writable) means: write in place.
_NO_TEMP = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENAMETOOLONG, errno.EEXIST)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _temp(folder: int, name: str, data: bytes, mode: int) -> str | None:
    """A new file beside `name` holding `data`; None if the folder does not allow one."""
    temp = f".{name[:200]}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno in _NO_TEMP:
            return None
        raise
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _discard(folder, temp)
        raise
    os.close(fd)
    return temp


def _discard(folder: int, temp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temp, dir_fd=folder)


def _copy_attributes(source: int, folder: int, temp: str) -> bool:
    """Copy the extended attributes (ACLs, labels) of `source` to `temp`; False if one fails."""
    if not hasattr(os, "listxattr"):
        return True
    target = f"/proc/self/fd/{folder}/{temp}"
    try:
        for name in os.listxattr(source):
            os.setxattr(target, name, os.getxattr(source, name), follow_symlinks=False)
    except OSError:
        return False
    return True


def _same_owner_and_mode(folder: int, temp: str, info: os.stat_result) -> bool:
    """Give `temp` the owner and mode of `info`; False if the owner cannot be given."""
    mine = os.stat(temp, dir_fd=folder, follow_symlinks=False)
    if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
        try:
            # Before chmod: changing the owner clears set-user-ID and set-group-ID bits.
            os.chown(temp, info.st_uid, info.st_gid, dir_fd=folder, follow_symlinks=False)
        except PermissionError:
            return False
    os.chmod(temp, info.st_mode & 0o7777, dir_fd=folder, follow_symlinks=False)
    return True


def _replace(folder: int, name: str, fd: int, data: bytes) -> bool:
    """Atomically replace `name` (open as `fd`) with `data` if that keeps everything, else False."""
    info = os.fstat(fd)
    if info.st_nlink > 1 or is_read_only(os.fstat(folder)):
        return False  # other names must see the edit; a read-only folder is not changed
    temp = _temp(folder, name, data, 0o600)
    if temp is None:
        return False
    try:
        if not (_same_owner_and_mode(folder, temp, info) and _copy_attributes(fd, folder, temp)):
            _discard(folder, temp)
            return False
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        _discard(folder, temp)
        raise
    return True


def _in_place(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    _write_all(fd, data)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _refuse_read_only(info: os.stat_result, shown: str) -> None:
    if is_read_only(info):
        raise ToolError(
            f"{shown} is read-only (mode {info.st_mode & 0o7777:o}); nothing was written. "
            "Ask the user to make it writable first."
        )


def _open_for_writing(folder: int, name: str, shown: str) -> tuple[int, os.stat_result]:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise ToolError(f"{shown} was deleted since it was read; nothing was written.") from None
    _refuse_read_only(stat_entry(folder, name, shown), shown)
    try:
        return open_entry(folder, name, shown, os.O_RDWR)
    except PermissionError:
        raise ToolError(f"{shown} is not writable by this user; nothing was written.") from None
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.ETXTBSY):
            raise ToolError(f"{shown} cannot be written ({exc.strerror}).") from None
        raise


def rewrite_file(path: Path, data: bytes, digest: str | None, shown: str) -> None:
    """Store `data` as the content of the existing regular file at the resolved `path`.

    Refused (ToolError) if the file is read-only or not writable by this user, or if `digest`
    is given and the content on disk no longer has that SHA-256. Mode, owner and hard links
    are kept.
    """
    folder = open_folder(path.parent, shown)
    try:
        fd, _info = _open_for_writing(folder, path.name, shown)
        try:
            if digest is not None:
                import hashlib

                current = hashlib.sha256(read_all(fd, MAX_CHECK_BYTES, shown)).hexdigest()
                if current != digest:
                    raise ToolError(
                        f"{shown} changed on disk since it was read; nothing was written. "
                        "Read it again."
                    )
            if not _replace(folder, path.name, fd, data):
                _in_place(fd, data)
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def check_writable(path: Path, shown: str) -> None:
    """ToolError unless the existing file at `path` may be written (a missing one may)."""
    try:
        folder = open_folder(path.parent, shown)
    except ToolError:
        return  # no folder: nothing on disk to protect
    try:
        try:
            os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return
        fd, _info = _open_for_writing(folder, path.name, shown)
        os.close(fd)
    finally:
        os.close(folder)


def create_new(path: Path, data: bytes, shown: str) -> None:
    """Create the file at the resolved `path` (and its folders) with `data`; never replaces."""
    folder = open_folder(path.parent, shown, create=True)
    try:
        if is_read_only(os.fstat(folder)):
            raise ToolError(f"Cannot create {shown}: its folder is read-only.")
        temp = _temp(folder, path.name, data, 0o666)  # the umask applies, as for any new file
        if temp is None:
            raise ToolError(f"Permission denied creating {shown}.")
        try:
            # A hard link never replaces an existing file, so a file created meanwhile is kept.
            os.link(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except FileExistsError:
            raise ToolError(f"{shown} already exists; nothing was written.") from None
        finally:
            _discard(folder, temp)
    finally:
        os.close(folder)
