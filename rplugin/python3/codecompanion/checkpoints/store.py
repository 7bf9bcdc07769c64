"""The checkpoint object store: content-addressed blobs and folder trees under the data folder.

Objects are named by the BLAKE2b hash of their bytes and kept zlib-compressed in
`objects/<2 hex>/<38 hex>`, written through a temp file and a rename, so a file's bytes are
stored once however many checkpoints hold them and a killed host never leaves half an object.
A capture that adds many objects (a project's first) writes them as one pack instead:
`packs/<name>.pack` (the compressed objects one after another) and `packs/<name>.idx` (JSON:
id → offset, length), the index renamed into place last, so a pack without one is ignored.
Creating a file is what a first capture of 10,000 files would otherwise spend its time on.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger("codecompanion.checkpoints")

# A tree row: (name, kind, mode, size, mtime_ns, ctime_ns, ino, object id); kind "d" is a
# folder whose id names its tree, "f" a file, "l" a symbolic link (its target is the blob),
# "b" a file too large to store (its id is empty). A folder's row holds only its mode, with its
# type bits (`folder_mode`): 0 is a folder captured before folder modes were, whose mode is
# not known (never one of mode 000, which is S_IFDIR).
CHUNK = 1 << 20
PACK_MIN = 64  # a batch of fewer new objects is written as loose files


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
        """Whether `other` holds the same bytes and mode (the stat may differ); a folder's
        mode counts when both know it."""
        if other is None or other.kind != self.kind:
            return False
        if self.kind == "d":  # a folder: what it holds are entries of their own
            return self.mode == other.mode or not (self.mode and other.mode)
        if other.mode != self.mode:
            return False
        if self.kind == "b":  # not stored: only its stat can tell
            return (self.size, self.mtime_ns) == (other.size, other.mtime_ns)
        return self.oid == other.oid


Row = tuple[str, str, int, int, int, int, int, str]
Tree = dict[str, Entry]  # name → its entry (a folder's names its tree)


def folder_mode(st_mode: int) -> int:
    """The mode a folder's row keeps: its permission bits with the folder's type bits."""
    return stat.S_IFDIR | stat.S_IMODE(st_mode)


def folder_entry(tree_id: str, mode: int) -> Entry:
    """A folder as its parent's tree holds it: its mode (0: not known) and its tree's id."""
    return Entry("d", mode, 0, 0, 0, 0, tree_id)


def object_id(data: bytes) -> str:
    """The id of some bytes: 40 hex digits of BLAKE2b."""
    import hashlib  # only once a chat captures: a plain chat never loads it

    return hashlib.blake2b(data, digest_size=20).hexdigest()


class ObjectStore:
    """Blobs and trees in one folder; every write is atomic, every read checked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.objects = folder / "objects"
        self.packs = folder / "packs"
        self._trees: dict[str, Tree] = {}  # parsed trees: ids never change meaning
        self._packed: dict[str, tuple[str, int, int]] | None = None  # id → pack, offset, length
        self._batch: dict[str, bytes] | None = None  # objects of an open batch, compressed

    def path(self, oid: str) -> Path:
        """Where loose object `oid` lives."""
        return self.objects / oid[:2] / oid[2:]

    def _pack_index(self) -> dict[str, tuple[str, int, int]]:
        """Every packed object's place (the indexes are read once)."""
        if self._packed is None:
            self._packed = {}
            for idx in sorted(self.packs.glob("*.idx")) if self.packs.is_dir() else []:
                try:
                    entries = json.loads(idx.read_text(encoding="utf-8"))
                    for oid, (offset, length) in entries.items():
                        self._packed[oid] = (idx.stem, int(offset), int(length))
                except (OSError, ValueError, TypeError) as exc:
                    log.warning("checkpoint pack index %s unreadable: %s", idx, exc)
        return self._packed

    def has(self, oid: str) -> bool:
        """Whether the object is stored (or waits in the open batch)."""
        if self._batch is not None and oid in self._batch:
            return True
        return oid in self._pack_index() or os.path.exists(self.path(oid))

    def put(self, data: bytes, oid: str | None = None) -> tuple[str, int]:
        """Store bytes (unless present); their id and the bytes written (0 when present)."""
        oid = oid or object_id(data)
        if self.has(oid):
            return oid, 0
        packed = zlib.compress(data, 1)
        if self._batch is not None:
            self._batch[oid] = packed
        else:
            self._write_loose(oid, packed)
        return oid, len(packed)

    def _write_loose(self, oid: str, packed: bytes) -> None:
        target = self.path(oid)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            with open(tmp, "wb") as handle:
                handle.write(packed)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Objects put meanwhile are written at the end: as one pack when there are many."""
        self._batch = {}
        try:
            yield
        finally:
            pending, self._batch = self._batch, None
            self._flush(pending)

    def _flush(self, objects: dict[str, bytes]) -> None:
        if len(objects) < PACK_MIN:
            for oid, packed in objects.items():
                self._write_loose(oid, packed)
            return
        self.packs.mkdir(parents=True, exist_ok=True)
        name = os.urandom(10).hex()
        index: dict[str, list[int]] = {}
        offset = 0
        pack, idx = self.packs / f"{name}.pack", self.packs / f"{name}.idx"
        tmp_pack, tmp_idx = self.packs / f".{name}.pack.tmp", self.packs / f".{name}.idx.tmp"
        try:
            with open(tmp_pack, "wb") as handle:
                for oid, packed in objects.items():
                    handle.write(packed)
                    index[oid] = [offset, len(packed)]
                    offset += len(packed)
            os.replace(tmp_pack, pack)
            tmp_idx.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp_idx, idx)  # last: until now the pack is not there for readers
        except BaseException:
            for path in (tmp_pack, tmp_idx, pack):
                path.unlink(missing_ok=True)
            raise
        table = self._pack_index()
        for oid, (start, length) in index.items():
            table[oid] = (name, start, length)

    def _raw(self, oid: str) -> bytes:
        if self._batch is not None and oid in self._batch:
            return self._batch[oid]
        place = self._pack_index().get(oid)
        if place is None:
            try:
                return self.path(oid).read_bytes()
            except FileNotFoundError:
                self._packed = None  # another Neovim's host may have written a pack since
                place = self._pack_index().get(oid)
                if place is None:
                    raise
        name, offset, length = place
        with open(self.packs / f"{name}.pack", "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def get(self, oid: str) -> bytes:
        """The bytes of a stored object; OSError when missing, ValueError when damaged."""
        try:
            data = zlib.decompress(self._raw(oid))
        except zlib.error as exc:
            raise ValueError(f"checkpoint object {oid} is damaged: {exc}") from None
        if object_id(data) != oid:
            raise ValueError(f"checkpoint object {oid} is damaged")
        return data

    def put_tree(self, rows: list[Row]) -> tuple[str, int]:
        """Store one folder's rows (sorted by name); the tree's id and bytes written."""
        data = json.dumps(rows, separators=(",", ":")).encode("utf-8", "surrogateescape")
        return self.put(b"tree\0" + data)

    def tree(self, oid: str) -> Tree:
        """A stored folder: name → entry (a folder's naming its tree)."""
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
            tree[name] = Entry(kind, mode, size, mtime, ctime, ino, ref)
        if len(self._trees) > 4096:
            self._trees.clear()
        self._trees[oid] = tree
        return tree

    def flatten(self, oid: str, prefix: str = "") -> dict[str, Entry]:
        """Every file of a tree, by its path relative to the project."""
        files: dict[str, Entry] = {}
        for name, item in self.tree(oid).items():
            path = prefix + name
            if item.kind == "d":
                files.update(self.flatten(item.oid, path + "/"))
            else:
                files[path] = item
        return files

    def entry(self, oid: str, path: str) -> Entry | None:
        """The entry of one file or link in a tree, or None (a folder too)."""
        item = self.node(oid, path)
        return item if item is not None and item.kind != "d" else None

    def node(self, oid: str, path: str) -> Entry | None:
        """What a tree holds at `path`: a file's, link's or folder's entry, or None."""
        parts = path.split("/")
        tree = self.tree(oid)
        for part in parts[:-1]:
            sub = tree.get(part)
            if sub is None or sub.kind != "d":
                return None
            tree = self.tree(sub.oid)
        return tree.get(parts[-1])

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
                if item.kind == "d":
                    stack.append(item.oid)
                elif item.oid:
                    seen.add(item.oid)
        return seen

    def stored(self) -> Iterator[tuple[str, int]]:
        """Every loose object id and its size on disk."""
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
        """Bytes the objects take on disk (loose and packed)."""
        loose = sum(size for _, size in self.stored())
        packs = self.packs.glob("*.pack") if self.packs.is_dir() else []
        return loose + sum(_size(path) for path in packs)

    def sweep(self, keep: set[str]) -> int:
        """Delete every object not in `keep`; the bytes freed. A pack holding some is
        written anew with only those."""
        freed = self._sweep_loose(keep) + self._sweep_packs(keep)
        for orphan in self.packs.glob("*.pack") if self.packs.is_dir() else []:
            if not (self.packs / f"{orphan.stem}.idx").exists():  # a write killed midway
                freed += _size(orphan)
                orphan.unlink(missing_ok=True)
        self._trees.clear()
        return freed

    def _sweep_loose(self, keep: set[str]) -> int:
        """Delete the loose objects not in `keep`; the bytes freed."""
        freed = 0
        for oid, size in list(self.stored()):
            if oid not in keep:
                try:
                    self.path(oid).unlink()
                    freed += size
                except OSError as exc:
                    log.debug("cannot remove checkpoint object %s: %s", oid, exc)
        return freed

    def _sweep_packs(self, keep: set[str]) -> int:
        """Write each pack that holds an object not in `keep` anew with only the kept ones;
        the bytes freed."""
        freed = 0
        by_pack: dict[str, list[str]] = {}
        for oid, (name, _offset, _length) in self._pack_index().items():
            by_pack.setdefault(name, []).append(oid)
        for name, oids in by_pack.items():
            if all(oid in keep for oid in oids):
                continue
            kept = {oid: self._raw(oid) for oid in oids if oid in keep}
            pack = self.packs / f"{name}.pack"
            freed += _size(pack) - sum(len(raw) for raw in kept.values())
            self._flush(kept)  # before the old pack goes: never a moment without them
            (self.packs / f"{name}.idx").unlink(missing_ok=True)
            pack.unlink(missing_ok=True)
            for oid in oids:
                if self._packed is not None and self._packed.get(oid, ("",))[0] == name:
                    del self._packed[oid]
        return freed


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def rows_of(tree: Tree) -> list[Row]:
    """A folder's rows in name order, as stored."""
    return [(name, *tree[name]) for name in sorted(tree)]
