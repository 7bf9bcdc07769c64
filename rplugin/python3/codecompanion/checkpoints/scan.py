"""Capturing a project folder into the store: a stat check per file, bytes read only when changed.

Like git's index, the previous capture's stat (size, times, inode, mode) stands in for the
bytes: a file whose stat is unchanged is not read again, and a folder whose rows are unchanged
keeps its tree id. A file written within RACY_NS of a capture is read again next time, since a
second write in the same timestamp tick would not change its stat.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .store import CHUNK, Entry, ObjectStore, folder_entry, folder_mode, object_id, rows_of

Pair = tuple[str, Entry]  # a folder's item: a file's entry, or a sub-folder's (naming its tree)
FolderStat = tuple[int, int, int, int]  # device, inode, mtime and ctime (ns)
_KEPT = frozenset((stat.S_IFREG, stat.S_IFLNK))


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    """A folder's items in name order (none when it cannot be read)."""
    try:
        with os.scandir(folder) as listing:
            items = list(listing)
    except OSError:
        return []
    items.sort(key=_name)
    return items


def _name(item: os.DirEntry[str]) -> str:
    return item.name


RACY_NS = 2_000_000_000
# Folders no checkpoint holds: version control, dependencies and caches tools rebuild.
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".cache",
    ".direnv",
    ".gradle",
    ".next",
    ".terraform",
)


def refused(path: str, exclude: frozenset[str]) -> str:
    """Why no capture could hold `path` ('' when one could): an empty, `.` or `..` part, a name
    captures leave out (`.git`, `node_modules`, …) on the way, or bytes no file name has. A
    restore writes nothing a capture could not have taken."""
    parts = path.split("/")
    if not path or any(part in ("", ".", "..") for part in parts):
        return "not a path inside the project"
    left_out = next((part for part in parts if part in exclude), None)
    if left_out is not None:
        return f"checkpoints never hold {left_out}"
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        return "not a file name"
    return "not a file name" if b"\0" in encoded else ""


class TooManyFiles(ValueError):
    """The project has more files than a capture may hold."""


@dataclass(frozen=True)
class ScanLimits:
    """What a capture leaves out: folders by name, files over a size, files past a count."""

    exclude: frozenset[str] = frozenset(DEFAULT_EXCLUDE)
    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 100_000


@dataclass
class ScanCache:
    """The last capture of one project: its files' entries, its folders' rows and tree ids,
    and the stat of each folder settled before it was listed (its names are the same while
    that stat is: adding, removing or renaming an entry changes the folder's times)."""

    files: dict[str, Entry] = field(default_factory=dict)
    dirs: dict[str, tuple[list[Pair], str]] = field(default_factory=dict)
    folders: dict[str, FolderStat] = field(default_factory=dict)


@dataclass
class ScanResult:
    """One capture: the root tree id and what it cost."""

    tree: str
    files: int = 0
    read: int = 0  # files whose bytes were read (new or changed stat)
    written: int = 0  # bytes added to the store
    skipped: list[str] = field(default_factory=list)  # too large, unreadable, past the count


class _Scan:
    def __init__(
        self, root: Path, store: ObjectStore, cache: ScanCache, limits: ScanLimits
    ) -> None:
        self.root = root
        self.store = store
        self.old = cache
        self.new = ScanCache()
        self.limits = limits
        self.cutoff = time.time_ns() - RACY_NS
        self.result = ScanResult(tree="")

    def folder(self, rel: str) -> Entry:
        """Capture one folder (and those below it); its entry (its mode and tree id)."""
        pairs: list[Pair] = []
        prefix = f"{rel}/" if rel else ""
        old_files, new_files, exclude = self.old.files, self.new.files, self.limits.exclude
        where = self.root / rel if rel else self.root
        # Its stat before its listing: a change after this shows in a later stat.
        own = _lstat(str(where))
        settled = _settled(own, self.cutoff)
        if settled is not None:
            self.new.folders[rel] = settled
        for item in _listing(where):
            name = item.name
            if name in exclude:
                continue
            path = prefix + name
            try:
                if item.is_dir(follow_symlinks=False):
                    pairs.append((name, self.folder(path)))
                    continue
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            old = old_files.get(path)
            # The hot path of a capture: a file whose stat is unchanged is what it was.
            if (
                old is not None
                and old[1:6]
                == (st.st_mode & 0o7777, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                and self.result.files < self.limits.max_files
                and stat.S_IFMT(st.st_mode) in _KEPT
            ):
                self.result.files += 1
                entry: Entry | None = old
            else:
                entry = self.file(path, st)
            if entry is not None:
                new_files[path] = entry
                pairs.append((name, entry))
        mode = folder_mode(own.st_mode) if own is not None and stat.S_ISDIR(own.st_mode) else 0
        return folder_entry(self._tree(rel, pairs), mode)

    def _tree(self, rel: str, pairs: list[Pair]) -> str:
        """The folder's tree id: the last capture's when its items are the same, else stored."""
        cached = self.old.dirs.get(rel)
        if cached is not None and cached[0] == pairs:
            oid = cached[1]
        else:
            oid, written = self.store.put_tree(rows_of(dict(pairs)))
            self.result.written += written
        self.new.dirs[rel] = (pairs, oid)
        return oid

    def file(self, path: str, st: os.stat_result) -> Entry | None:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            return None  # FIFOs, sockets and devices hold no bytes to keep
        if self.result.files >= self.limits.max_files:
            # A capture that left files out would show them as deleted: none is taken.
            raise TooManyFiles(
                f"the project has more than {self.limits.max_files:,} files: no checkpoints "
                "(raise opts.checkpoints.max_files, or exclude folders)"
            )
        self.result.files += 1
        mode = stat.S_IMODE(st.st_mode)  # an unchanged stat was taken by folder()'s check
        racy = st.st_mtime_ns >= self.cutoff or st.st_ctime_ns >= self.cutoff
        ctime = -1 if racy else st.st_ctime_ns  # never matches: read again next time
        if stat.S_ISLNK(st.st_mode):
            try:
                data = os.fsencode(os.readlink(self.root / path))
            except OSError:
                return None
            return self._stored("l", path, data, mode, st, ctime)
        if st.st_size > self.limits.max_file_bytes:
            self.result.skipped.append(path)
            return Entry("b", mode, st.st_size, st.st_mtime_ns, ctime, st.st_ino, "")
        content = read_file(self.root / path, self.limits.max_file_bytes)
        if content is None:  # unreadable: noted by its stat, like a large file
            self.result.skipped.append(path)
            return Entry("b", mode, st.st_size, st.st_mtime_ns, -1, st.st_ino, "")
        return self._stored("f", path, content, mode, st, ctime)

    def _stored(
        self, kind: str, path: str, data: bytes, mode: int, st: os.stat_result, ctime: int
    ) -> Entry:
        self.result.read += 1
        oid, written = self.store.put(data, object_id(data))
        self.result.written += written
        return Entry(kind, mode, len(data), st.st_mtime_ns, ctime, st.st_ino, oid)


def read_file(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (never through a link), or None when unreadable or over `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        parts: list[bytes] = []
        total = 0
        while chunk := os.read(fd, CHUNK):
            parts.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def capture(
    root: Path, store: ObjectStore, cache: ScanCache, limits: ScanLimits
) -> tuple[ScanResult, ScanCache]:
    """Store the project's current state; the result and the cache for the next capture."""
    scan = _Scan(root, store, cache, limits)
    with store.batch():
        scan.result.tree = scan.folder("").oid
    return scan.result, scan.new


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _settled(st: os.stat_result | None, cutoff: int) -> FolderStat | None:
    """A folder's stat, if it is a folder (not a link) last changed before `cutoff`."""
    if st is None or not stat.S_ISDIR(st.st_mode):
        return None
    if st.st_mtime_ns >= cutoff or st.st_ctime_ns >= cutoff:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns


def unchanged(root: Path, cache: ScanCache, limits: ScanLimits) -> str | None:
    """The tree id of the last capture if the project is still as it found it (every folder
    holds the same names, every file has the same stat); None at the first difference.

    The stat walk a capture of an unchanged project does, without building a new cache or
    trees: a capture finding nothing new would store nothing and keep the same tree. A folder
    whose own stat is the one recorded is not listed again: its names are the same.
    """
    top = cache.dirs.get("")
    if top is None:
        return None
    walk = _Check(cache, limits, time.time_ns() - RACY_NS)
    return top[1] if walk.same(str(root), "", top[0]) else None


@dataclass
class _Check:
    """One walk of `unchanged`."""

    cache: ScanCache
    limits: ScanLimits
    cutoff: int
    files: int = 0

    def same(self, where: str, rel: str, pairs: list[Pair]) -> bool:
        """True if folder `rel` (at `where`) holds exactly `pairs` as the last capture found."""
        if not self._same_names(where, rel, pairs):
            return False
        prefix = f"{rel}/" if rel else ""
        for name, old in pairs:
            try:
                st = os.lstat(f"{where}/{name}")
            except OSError:
                return False
            if old.kind == "d":  # a folder: the same mode, the same tree below it
                sub = self.cache.dirs.get(prefix + name)
                if sub is None or sub[1] != old.oid or not stat.S_ISDIR(st.st_mode):
                    return False
                if old.mode != folder_mode(st.st_mode):
                    return False
                if not self.same(f"{where}/{name}", prefix + name, sub[0]):
                    return False
            elif not self._same_file(st, old):
                return False
        return True

    def _same_names(self, where: str, rel: str, pairs: list[Pair]) -> bool:
        """True if the folder lists the names of `pairs`: known from its own stat when that
        is the one recorded, else listed."""
        known = self.cache.folders.get(rel)
        if known is not None and _settled(_lstat(where), self.cutoff) == known:
            return True
        try:
            names = sorted(n for n in os.listdir(where) if n not in self.limits.exclude)
        except OSError:
            return False
        return names == [name for name, _ in pairs]

    def _same_file(self, st: os.stat_result, old: Entry) -> bool:
        """True if a file's stat is the one its entry holds (and the count is in bounds)."""
        self.files += 1
        return (
            old[1:6] == (st.st_mode & 0o7777, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            and stat.S_IFMT(st.st_mode) in _KEPT
            and self.files <= self.limits.max_files
        )


def cache_from_tree(store: ObjectStore, oid: str) -> ScanCache:
    """A cache rebuilt from a stored tree (the host restarted): unchanged files are not read."""
    cache = ScanCache()

    def walk(tree_id: str, rel: str) -> None:
        tree = store.tree(tree_id)
        cache.dirs[rel] = (sorted(tree.items()), tree_id)
        for name, item in tree.items():
            path = f"{rel}/{name}" if rel else name
            if item.kind == "d":
                walk(item.oid, path)
            else:
                cache.files[path] = item

    walk(oid, "")
    return cache
