"""Writing a rewind's paths: each checked against the state its plan expected right before it
changes, what was there taken whole and kept for the undo, and never a step through a link.

A path is changed in three moves: what is there is renamed aside (one atomic step takes it, so
a save a moment later is not lost), compared with what the plan expected, and only then is
the new file, link or folder put in its place, without replacing anything that appeared
meanwhile (a hard link, which fails on an existing name). When what was taken is not what
the plan expected, it goes back and the path is reported as moved: the rewind asks again.
Each folder on the way is opened from its parent without following a link.

Folders a path leaves are handled deepest first (a folder goes once what it held has gone), and
what is put in place shallowest first (a folder before what it holds). A folder gets its mode
from a descriptor opened on it without following a link; one whose mode withholds its owner's
access is opened to the owner until what it holds is in place, then given its mode, deepest
first.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .activity import Mark, mark_of
from .changes import same
from .store import CHUNK, Entry, ObjectStore, folder_entry, folder_mode

log = logging.getLogger("codecompanion.checkpoints")
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_HANDLE = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # needs no permission
_OWNER = stat.S_IRWXU


@dataclass(frozen=True)
class Restore:
    """One path to put back: `target` is what it becomes (None: removed), `current` what it is."""

    path: str
    target: Entry | None
    current: Entry | None


class Kept(Exception):
    """The path stays as it is, rightly: a folder still holding files the rewind leaves."""


class Moved(Exception):
    """The path is not what the plan expected: `found` is what it holds now (None: nothing)."""

    def __init__(self, found: Entry | None) -> None:
        super().__init__("changed since the rewind was planned")
        self.found = found


@dataclass
class Outcome:
    """What one batch of writes did."""

    done: list[str] = field(default_factory=list)  # now as the plan wanted
    moved: list[Restore] = field(default_factory=list)  # changed meanwhile: what they hold now
    kept: list[str] = field(default_factory=list)  # folders that still hold the user's files
    failed: list[str] = field(default_factory=list)  # "path: why"
    replaced: dict[str, Entry | None] = field(default_factory=dict)  # what each write took
    wrote: dict[str, Entry | None] = field(default_factory=dict)  # what each write left
    marks: dict[str, Mark | None] = field(default_factory=dict)  # as an lstat saw it after


def apply(root: Path, store: ObjectStore, items: list[Restore]) -> Outcome:
    """Put each item's target in place (or remove what is there), each checked first."""
    outcome = Outcome()
    writer = _Writer(root, store, outcome)
    clearing = [i for i in items if _leaves_folder(i) or (i.target is None and i.current)]
    placing = [i for i in items if i.target is not None]
    stopped: set[str] = set()
    for item in sorted(clearing, key=_deepest_first):
        if not writer.attempt(item, writer.clear):
            stopped.add(item.path)
    for item in sorted(placing, key=_shallowest_first):
        if item.path in stopped:
            continue
        if _leaves_folder(item):  # the folder went above: nothing is there now
            item = Restore(item.path, item.target, None)
        writer.attempt(item, writer.place)
    writer.close_folders()
    return outcome


def _leaves_folder(item: Restore) -> bool:
    return _kind(item.current) == "d" and _kind(item.target) != "d"


def _kind(entry: Entry | None) -> str:
    return entry.kind if entry is not None else ""


def _deepest_first(item: Restore) -> tuple[int, str]:
    return (-item.path.count("/"), item.path)


def _shallowest_first(item: Restore) -> tuple[int, str]:
    return (item.path.count("/"), item.path)


class _Writer:
    """One batch's writes under the root, recorded in its outcome."""

    def __init__(self, root: Path, store: ObjectStore, outcome: Outcome) -> None:
        self.root = root
        self.store = store
        self.outcome = outcome
        self.closing: dict[str, tuple[int, int]] = {}  # folder → its mode, inode: set last

    def attempt(self, item: Restore, step: Callable[[Restore], None]) -> bool:
        """Run one step of an item; False when it moved or failed (reported). Any failure is
        the item's alone: the batch goes on, and what it did is recorded."""
        try:
            step(item)
        except Moved as moved:
            self.outcome.moved.append(Restore(item.path, item.target, moved.found))
            return False
        except Kept:
            self.outcome.kept.append(item.path)
            return False
        except (OSError, ValueError) as exc:
            self.outcome.failed.append(f"{item.path}: {_reason(exc)}")
            return False
        except Exception as exc:
            log.exception("rewind of %r failed", item.path)
            self.outcome.failed.append(f"{item.path}: internal error: {exc}")
            return False
        if item.path not in self.outcome.done:
            self.outcome.done.append(item.path)
        return True

    def _note(self, path: str, took: Entry | None, left: Entry | None, folder: int) -> None:
        """Record a change: what it took (the first time), what it left and its mark."""
        self.outcome.replaced.setdefault(path, took)
        self.outcome.wrote[path] = left
        name = path.rsplit("/", 1)[-1]
        try:
            self.outcome.marks[path] = mark_of(os.stat(name, dir_fd=folder, follow_symlinks=False))
        except OSError:
            self.outcome.marks[path] = None

    def clear(self, item: Restore) -> None:
        """Remove what the item's path holds (a folder only when empty)."""
        parent, name = _split(item.path)
        folder = self._folder(parent, make=False)
        try:
            if _kind(item.current) == "d":
                found = self._read(folder, name)
                if not same(found, item.current):
                    raise Moved(found)
                self._remove_folder(folder, name)
            else:
                aside = self._take(folder, name, item.current)
                if aside is not None:
                    os.unlink(aside, dir_fd=folder)
            self._note(item.path, item.current, None, folder)
        finally:
            os.close(folder)

    def _remove_folder(self, folder: int, name: str) -> None:
        try:
            os.rmdir(name, dir_fd=folder)
        except FileNotFoundError:
            raise Moved(None) from None
        except NotADirectoryError:
            raise Moved(self._read(folder, name)) from None
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise Kept() from None
            raise

    def place(self, item: Restore) -> None:
        """Put the item's target at its path, in place of what the plan expected there."""
        target = item.target
        assert target is not None
        parent, name = _split(item.path)
        folder = self._folder(parent, make=True)
        try:
            found = self._peek(folder, name, target)
            if same(found, target):
                return  # already so: nothing written, nothing to undo
            if target.kind == "d":
                aside = self._make_folder(item, folder, found)
            else:
                aside = self._swap(folder, name, item.current, target)
            if aside is not None:
                _discard(folder, aside)
            self._note(item.path, item.current, target, folder)
            if target.kind == "d" and target.mode:  # 0: captured before folders had modes
                self._set_mode(folder, item.path, target.mode)
        finally:
            os.close(folder)

    def _make_folder(self, item: Restore, folder: int, found: Entry | None) -> str | None:
        """Make the item's folder (open to its owner only, until its mode is set), unless a
        folder is there with the mode the plan expected; the aside name of what it replaced."""
        assert item.target is not None
        if _kind(found) == "d":  # only its mode differs
            if not same(found, item.current):
                raise Moved(found)
            return None
        name = _split(item.path)[1]
        aside = self._take(folder, name, item.current)
        os.mkdir(name, 0o700 if item.target.mode else 0o777, dir_fd=folder)
        return aside

    def _set_mode(self, folder: int, path: str, mode: int) -> None:
        """Give folder `path` (in `folder`) its mode, open to its owner until what it holds
        is in place when the mode withholds that."""
        bits = stat.S_IMODE(mode)
        ino = _chmod_folder(folder, _split(path)[1], bits | _OWNER)
        if bits & _OWNER != _OWNER:
            self.closing[path] = (bits, ino)

    def close_folders(self) -> None:
        """Give the folders opened to their owner their own modes, deepest first."""
        for path in sorted(self.closing, key=lambda p: (-p.count("/"), p)):
            bits, ino = self.closing[path]
            parent, name = _split(path)
            try:
                folder = self._folder(parent, make=False)
                try:
                    _chmod_folder(folder, name, bits, ino)
                finally:
                    os.close(folder)
            except OSError as exc:
                self.outcome.failed.append(f"{path}: its mode: {_reason(exc)}")

    def _swap(self, folder: int, name: str, current: Entry | None, target: Entry) -> str | None:
        """Make the target beside the path, take what is there, and put the target in."""
        temp = self._make(folder, name, target)
        try:
            aside = self._take(folder, name, current)
            try:
                _link(folder, temp, name)
            except FileExistsError:  # something was written there after it was taken
                if aside is not None:
                    _discard(folder, aside)  # what the plan expected: the capture holds it
                raise Moved(self._read(folder, name)) from None
            return aside
        finally:
            _discard(folder, temp)

    def _make(self, folder: int, name: str, target: Entry) -> str:
        """The target's file or link under a temporary name beside `name`."""
        data = self.store.get(target.oid)
        temp = f".{name[:80]}.{os.urandom(4).hex()}.rewind"
        if target.kind == "l":
            os.symlink(os.fsdecode(data), temp, dir_fd=folder)
            return temp
        if target.kind != "f":
            raise ValueError(f"a checkpoint entry of kind {target.kind!r}")
        fd = os.open(temp, _NEW, 0o600, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, stat.S_IMODE(target.mode))
        except BaseException:
            os.close(fd)
            _discard(folder, temp)
            raise
        os.close(fd)
        return temp

    def _take(self, folder: int, name: str, expected: Entry | None) -> str | None:
        """Rename what is at `name` aside and check it is `expected`; the aside name (None when
        nothing was there). Moved (and put back) when it is not what was expected."""
        aside = f".{name[:80]}.{os.urandom(4).hex()}.taken"
        try:
            os.rename(name, aside, src_dir_fd=folder, dst_dir_fd=folder)
        except FileNotFoundError:
            if expected is not None:
                raise Moved(None) from None
            return None
        if not same(self._read(folder, aside, expected), expected):
            found = self._read(folder, aside)  # whole and stored: the question shows it
            _put_back(folder, aside, name)
            raise Moved(found)
        return aside

    def _peek(self, folder: int, name: str, target: Entry) -> Entry | None:
        """What `name` holds now, read only when it may be `target` (not stored)."""
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return self._entry(folder, name, st, target, keep=False)

    def _read(self, folder: int, name: str, expected: Entry | None = None) -> Entry | None:
        """What `name` holds, its bytes stored (a folder, or what holds no bytes, as is)."""
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return self._entry(folder, name, st, expected, keep=True)

    def _entry(
        self, folder: int, name: str, st: os.stat_result, expected: Entry | None, keep: bool
    ) -> Entry:
        mode = stat.S_IMODE(st.st_mode)
        times = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        if stat.S_ISDIR(st.st_mode):
            return folder_entry("", folder_mode(st.st_mode))
        if stat.S_ISLNK(st.st_mode):
            data = os.fsencode(os.readlink(name, dir_fd=folder))
            kind = "l"
        elif stat.S_ISREG(st.st_mode):
            if expected is not None and (expected.kind, expected.size) != ("f", st.st_size):
                return Entry("f", mode, st.st_size, *times, "?")  # not it: no need to read
            data = _read_file(folder, name)
            kind = "f"
        else:
            return Entry("x", mode, st.st_size, *times, "")  # a FIFO, socket or device
        oid = self.store.put(data)[0] if keep else _object_id(data)
        return Entry(kind, mode, len(data), *times, oid)

    def _folder(self, rel: str, make: bool) -> int:
        """The folder `rel` (the root for ""), each step opened without following a link;
        `make` creates missing ones (recorded, so the undo removes them)."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        done = ""
        for part in rel.split("/") if rel else []:
            done = f"{done}/{part}" if done else part
            try:
                step = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    os.close(fd)
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                self._note(done, None, folder_entry("", 0), fd)
                step = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(exc.errno, f"{done} is not a folder (a link or a file)") from None
                raise
            os.close(fd)
            fd = step
        return fd


def _chmod_folder(folder: int, name: str, bits: int, ino: int = 0) -> int:
    """Set the mode of the folder `name` in `folder` (never through a link, nor of another
    inode than `ino` when given); its inode."""
    fd = os.open(name, _HANDLE, dir_fd=folder)
    try:
        st = os.fstat(fd)
        if ino and st.st_ino != ino:
            raise OSError(errno.ESTALE, "the folder was replaced meanwhile")
        # A handle opened without permissions cannot be chmod-ed itself: its /proc name can.
        os.chmod(f"/proc/self/fd/{fd}", bits)
        return st.st_ino
    finally:
        os.close(fd)


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent, name


def _read_file(folder: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        parts: list[bytes] = []
        while chunk := os.read(fd, CHUNK):
            parts.append(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def _object_id(data: bytes) -> str:
    from .store import object_id

    return object_id(data)


def _link(folder: int, source: str, name: str) -> None:
    """Give `source`'s file or link the name `name`, never replacing one that exists."""
    try:
        os.link(source, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(f"/proc/self/fd/{folder}/{name}"):
            raise FileExistsError(errno.EEXIST, "exists") from None
        os.rename(source, name, src_dir_fd=folder, dst_dir_fd=folder)  # no hard links here
        return


def _put_back(folder: int, aside: str, name: str) -> None:
    """Give what was taken its name again; kept aside (visible) if the name was taken since."""
    try:
        st = os.stat(aside, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            try:
                os.stat(name, dir_fd=folder, follow_symlinks=False)
                return  # the name is in use again: the folder stays under its aside name
            except FileNotFoundError:
                os.rename(aside, name, src_dir_fd=folder, dst_dir_fd=folder)
                return
        _link(folder, aside, name)
        _discard(folder, aside)
    except FileExistsError:
        return  # both kept: the newest under the name, the taken one beside it
    except FileNotFoundError:
        return


def _discard(folder: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        os.rmdir(name, dir_fd=folder)


def _reason(exc: OSError | ValueError) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
