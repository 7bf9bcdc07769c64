"""What changed between checkpoints, and who changed it: the chat (its tool rounds and rewinds)
or the user (everything between them)."""

from __future__ import annotations

import stat
from dataclasses import dataclass, field

from ..tools.diffs import Hunk, apply_hunks, hunks
from .journal import Record
from .store import Entry, ObjectStore

# Text diffs stop here: beyond it a file is shown as changed, without hunks.
DIFF_LIMIT = 2 * 1024 * 1024


def same(a: Entry | None, b: Entry | None) -> bool:
    """Whether two entries (or absences) hold the same bytes and mode (two folders of the
    same mode are the same: what they hold are entries of their own)."""
    return a is None and b is None or a is not None and a.same_content(b)


def changed_paths(
    store: ObjectStore, old: str, new: str, prefix: str = "", folders: bool = False
) -> set[str]:
    """Paths whose bytes or mode differ between two trees (equal sub-trees are skipped); with
    `folders`, also each folder that is in one tree and not in the other (an empty one too),
    or whose mode changed."""
    if old == new:
        return set()
    a = store.tree(old) if old else {}
    b = store.tree(new) if new else {}
    found: set[str] = set()
    for name in a.keys() | b.keys():
        x, y = a.get(name), b.get(name)
        if x == y:  # the same sub-tree, or the same file to its stat
            continue
        path = prefix + name
        found |= _folder_changes(store, x, y, path, folders)
        x_file = x if x is not None and x.kind != "d" else None
        y_file = y if y is not None and y.kind != "d" else None
        if x_file is None and y_file is None:
            continue
        if x_file is None or not x_file.same_content(y_file):
            found.add(path)
    return found


def _folder_changes(
    store: ObjectStore, x: Entry | None, y: Entry | None, path: str, folders: bool
) -> set[str]:
    """What changed below `path` when either side is a folder (and, with `folders`, the folder
    itself when it is on one side only or its mode changed)."""
    x_tree = x.oid if x is not None and x.kind == "d" else ""
    y_tree = y.oid if y is not None and y.kind == "d" else ""
    if not (x_tree or y_tree):
        return set()
    found = changed_paths(store, x_tree, y_tree, path + "/", folders)
    if folders and not (x_tree and y_tree and same(x, y)):
        found.add(path)
    return found


def span(
    store: ObjectStore, previous: str, record: Record, folders: bool = False
) -> tuple[set[str], set[str]]:
    """The paths changed from tree `previous` to the record's: (the chat's, the user's). A
    record by the chat names the paths the user changed instead, and those either may have
    changed (in both sets)."""
    changed = changed_paths(store, previous, record.tree, folders=folders)
    if record.by != "chat":
        return set(), changed
    user = changed.intersection(record.user)
    both = changed.intersection(record.both)
    return changed - user, user | both


@dataclass
class Attribution:
    """Since one checkpoint: the paths the chat changed and those the user changed (folders
    that came or went among them)."""

    chat: set[str] = field(default_factory=set)
    user: set[str] = field(default_factory=set)


def attribute(store: ObjectStore, records: list[Record], start: int, now: str) -> Attribution:
    """Who changed what after `records[start]`, up to the tree `now` (the user's, if newer)."""
    result = Attribution()
    previous = records[start].tree
    for record in records[start + 1 :]:
        chat, user = span(store, previous, record, folders=True)
        result.chat |= chat
        result.user |= user
        previous = record.tree
    result.user |= changed_paths(store, previous, now, folders=True)
    return result


@dataclass
class FileChange:
    """One file between a checkpoint and now: its status, line counts and hunks."""

    path: str
    status: str  # "added", "deleted", "modified", "mode" (only the mode changed)
    added: int = 0
    removed: int = 0
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    old_eol: bool = True  # the old text ended with a newline
    new_eol: bool = True

    def reverted(self, hunk: int) -> bytes:
        """The new text with hunk `hunk` (an index into `hunks`) put back as it was."""
        keep = set(range(len(self.hunks))) - {hunk}
        lines = apply_hunks(self.old_lines, self.new_lines, keep)
        back = self.hunks[hunk]
        # The last line, and so the final newline, is the old one when the hunk ends both texts.
        at_end = back.old_end == len(self.old_lines) and back.new_end == len(self.new_lines)
        eol = self.old_eol if at_end else self.new_eol
        return ("\n".join(lines) + ("\n" if eol and lines else "")).encode("utf-8")

    def short(self) -> str:
        """`a.py +4 −1`, `b.bin (binary)`, `c.py (deleted)`."""
        if self.binary:
            return f"{self.path} ({self.status}, binary)"
        label = {"added": " (new)", "deleted": " (deleted)", "mode": " (mode)"}.get(self.status, "")
        counts = [f"+{self.added}"] if self.added else []
        counts += [f"−{self.removed}"] if self.removed else []
        return f"{self.path}{label} {' '.join(counts)}".rstrip()


def text_lines(data: bytes | None) -> list[str] | None:
    """A file's lines (a final newline ends the last line; it starts no empty one), or None
    when it is binary (NUL bytes, not UTF-8, or too large)."""
    if data is None:
        return []
    if len(data) > DIFF_LIMIT or b"\0" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def file_change(path: str, old: Entry | None, new: Entry | None, read: Reader) -> FileChange:
    """The change of one file from entry `old` to `new` (None: absent)."""
    status = "added" if old is None else "deleted" if new is None else "modified"
    before, after = read(old), read(new)
    if status == "modified" and before == after:
        return FileChange(path, "mode")
    old_lines, new_lines = text_lines(before), text_lines(after)
    if old_lines is None or new_lines is None or "b" in (_kind(old), _kind(new)):
        return FileChange(path, status, binary=True)
    return _text_change(path, status, old_lines, new_lines, before or b"", after or b"")


def _text_change(
    path: str, status: str, old: list[str], new: list[str], before: bytes, after: bytes
) -> FileChange:
    found = hunks(old, new)
    return FileChange(
        path,
        status,
        added=sum(h.new_end - h.new_start for h in found),
        removed=sum(h.old_end - h.old_start for h in found),
        hunks=found,
        old_lines=old,
        new_lines=new,
        old_eol=before.endswith(b"\n"),
        new_eol=after.endswith(b"\n"),
    )


def file_changes(store: ObjectStore, paths: set[str], old: str, new: str) -> list[FileChange]:
    """The change of each of `paths` from tree `old` to tree `new`, by path; an unchanged one
    is left out."""
    read = Reader(store)
    found: list[FileChange] = []
    for path in sorted(paths):
        before, after = store.entry(old, path), store.entry(new, path)
        if not same(before, after):
            found.append(file_change(path, before, after, read))
    return found


@dataclass(frozen=True)
class Version:
    """One side of a path both the user and the chat changed: what it is, in words, and its
    bytes (a file's, or a link's target; None for a folder or nothing)."""

    what: str
    data: bytes | None


def described(entry: Entry | None) -> str:
    """What an entry is in a few words: `a file (mode 644)`, `a folder (mode 700)`, `a link`,
    `nothing`."""
    if entry is None:
        return "nothing"
    mode = f" (mode {stat.S_IMODE(entry.mode):o})"
    if entry.kind == "d":
        return "a folder" + (mode if entry.mode else "")  # 0: captured before folders had modes
    if entry.kind == "l":
        return "a link"
    if entry.kind == "x":
        return "a FIFO, socket or device"
    return "a file" + mode


def _kind(entry: Entry | None) -> str:
    return entry.kind if entry is not None else ""


class Reader:
    """Reads the bytes of entries from the store (a too-large file reads as None)."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def __call__(self, entry: Entry | None) -> bytes | None:
        if entry is None or not entry.oid:
            return None
        return self.store.get(entry.oid)


def summary(changes: list[FileChange], limit: int = 4) -> str:
    """`3 files changed: a.py +4 −1, b.py (new) +10, c.txt (deleted)` (empty when none)."""
    if not changes:
        return ""
    noun = "file" if len(changes) == 1 else "files"
    shown = ", ".join(change.short() for change in changes[:limit])
    more = f", and {len(changes) - limit} more" if len(changes) > limit else ""
    return f"{len(changes)} {noun} changed: {shown}{more}"
