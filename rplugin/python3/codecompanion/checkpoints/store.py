"""The checkpoint object store: content-addressed blobs and folder trees under the data folder.

Objects are named by the BLAKE2b hash of their bytes and kept zlib-compressed in
`objects/<2 hex>/<38 hex>`, written through a temp file and a rename, so a file's bytes are
stored once however many checkpoints hold them and a killed host never leaves half an object.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger("codecompanion.checkpoints")

# A tree row: (name, kind, mode, size, mtime_ns, ctime_ns, ino, object id); kind "d" is a
# folder whose id names its tree, "f" a file, "l" a symbolic link (its target is the blob),
# "b" a file too large to store (its id is empty).
CHUNK = 1 << 20


class Entry(NamedTuple):
    """One file of a snapshot as it was found: its kind, mode, stat and stored bytes."""

    kind: str
    mode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    oid: str

    def same_content(self, other: Entry | None) -> bool:
        """Whether `other` holds the same bytes and mode (the stat may differ)."""
        if other is None or other.kind != self.kind or other.mode != self.mode:
            return False
        if self.kind == "b":  # not stored: only its stat can tell
            return (self.size, self.mtime_ns) == (other.size, other.mtime_ns)
        return self.oid == other.oid


Row = tuple[str, str, int, int, int, int, int, str]
Tree = dict[str, "Entry | str"]  # name → a file's entry, or a folder's tree id


def object_id(data: bytes) -> str:
    """The id of some bytes: 40 hex digits of BLAKE2b."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


class ObjectStore:
    """Blobs and trees in one folder; every write is atomic, every read checked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.objects = folder / "objects"
        self._trees: dict[str, Tree] = {}  # parsed trees: ids never change meaning

    def path(self, oid: str) -> Path:
        """Where object `oid` lives."""
        return self.objects / oid[:2] / oid[2:]

    def has(self, oid: str) -> bool:
        """Whether the object is stored."""
        return os.path.exists(self.path(oid))

    def put(self, data: bytes, oid: str | None = None) -> tuple[str, int]:
        """Store bytes (unless present); their id and the bytes written (0 when present)."""
        oid = oid or object_id(data)
        target = self.path(oid)
        if os.path.exists(target):
            return oid, 0
        packed = zlib.compress(data, 1)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            with open(tmp, "wb") as handle:
                handle.write(packed)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return oid, len(packed)

    def get(self, oid: str) -> bytes:
        """The bytes of a stored object; OSError when missing, ValueError when damaged."""
        data = zlib.decompress(self.path(oid).read_bytes())
        if object_id(data) != oid:
            raise ValueError(f"checkpoint object {oid} is damaged")
        return data

    def put_tree(self, rows: list[Row]) -> tuple[str, int]:
        """Store one folder's rows (sorted by name); the tree's id and bytes written."""
        data = json.dumps(rows, separators=(",", ":")).encode("utf-8", "surrogateescape")
        return self.put(b"tree\0" + data)

    def tree(self, oid: str) -> Tree:
        """A stored folder: name → entry, or name → sub-tree id."""
        cached = self._trees.get(oid)
        if cached is not None:
            return cached
        raw = self.get(oid)
        if not raw.startswith(b"tree\0"):
            raise ValueError(f"checkpoint object {oid} is not a tree")
        tree: Tree = {}
        for name, kind, mode, size, mtime, ctime, ino, ref in json.loads(
            raw[5:].decode("utf-8", "surrogateescape")
        ):
            tree[name] = ref if kind == "d" else Entry(kind, mode, size, mtime, ctime, ino, ref)
        if len(self._trees) > 4096:
            self._trees.clear()
        self._trees[oid] = tree
        return tree

    def flatten(self, oid: str, prefix: str = "") -> dict[str, Entry]:
        """Every file of a tree, by its path relative to the project."""
        files: dict[str, Entry] = {}
        for name, item in self.tree(oid).items():
            path = prefix + name
            if isinstance(item, str):
                files.update(self.flatten(item, path + "/"))
            else:
                files[path] = item
        return files

    def entry(self, oid: str, path: str) -> Entry | None:
        """The entry of one path in a tree, or None."""
        parts = path.split("/")
        tree = self.tree(oid)
        for part in parts[:-1]:
            sub = tree.get(part)
            if not isinstance(sub, str):
                return None
            tree = self.tree(sub)
        item = tree.get(parts[-1])
        return item if isinstance(item, Entry) else None

    def has_folder(self, oid: str, path: str) -> bool:
        """Whether a tree holds the folder `path`."""
        tree = self.tree(oid)
        for part in path.split("/"):
            sub = tree.get(part)
            if not isinstance(sub, str):
                return False
            tree = self.tree(sub)
        return True

    def reachable(self, roots: Iterable[str]) -> set[str]:
        """Every object the trees `roots` hold (themselves, sub-trees and blobs)."""
        seen: set[str] = set()
        stack = [r for r in roots if r]
        while stack:
            oid = stack.pop()
            if oid in seen:
                continue
            seen.add(oid)
            try:
                tree = self.tree(oid)
            except (OSError, ValueError):
                continue
            for item in tree.values():
                if isinstance(item, str):
                    stack.append(item)
                elif item.oid:
                    seen.add(item.oid)
        return seen

    def stored(self) -> Iterator[tuple[str, int]]:
        """Every object id stored and its size on disk."""
        if not self.objects.is_dir():
            return
        for bucket in os.scandir(self.objects):
            if not bucket.is_dir():
                continue
            for item in os.scandir(bucket.path):
                if not item.name.startswith("."):
                    try:
                        yield bucket.name + item.name, item.stat().st_size
                    except OSError:
                        continue

    def size(self) -> int:
        """Bytes the objects take on disk."""
        return sum(size for _, size in self.stored())

    def sweep(self, keep: set[str]) -> int:
        """Delete every object not in `keep`; the bytes freed."""
        freed = 0
        for oid, size in list(self.stored()):
            if oid not in keep:
                try:
                    self.path(oid).unlink()
                    freed += size
                except OSError as exc:
                    log.debug("cannot remove checkpoint object %s: %s", oid, exc)
        self._trees.clear()
        return freed


def rows_of(tree: dict[str, Entry | str]) -> list[Row]:
    """A folder's rows in name order, as stored."""
    rows: list[Row] = []
    for name in sorted(tree):
        item = tree[name]
        if isinstance(item, str):
            rows.append((name, "d", 0, 0, 0, 0, 0, item))
        else:
            rows.append((name, *item))
    return rows
