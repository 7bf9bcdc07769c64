"""Planning a rewind or its undo: which paths go back, which to ask about, which are refused.

A path is a file, a link or a folder (an empty one too). Every path a plan would write is
checked against what a capture may hold: nothing under `.git` or another left-out name, no
`..`, nothing a crafted journal or tree could add. `restore.py` does the writing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .activity import Mark
from .changes import attribute, same
from .journal import Kind, Record
from .restore import Outcome, Restore
from .scan import refused
from .store import Entry, ObjectStore

_KINDS = ("f", "l", "d", "b")


@dataclass
class RestorePlan:
    """A rewind's or an undo's paths: safe to restore, to ask about, beyond restoring, refused."""

    restore: list[Restore] = field(default_factory=list)
    conflicts: list[Restore] = field(default_factory=list)  # the user changed them too
    unrestorable: list[str] = field(default_factory=list)  # its bytes then or now not stored
    refused: list[str] = field(default_factory=list)  # "path: why": no capture could hold it


def add_item(plan: RestorePlan, item: Restore, conflict: bool, exclude: frozenset[str]) -> None:
    """Put an item in the plan: to restore, to ask about, beyond restoring, or refused."""
    why = refused(item.path, exclude) or _odd(item.target) or _odd(item.current)
    if why:
        plan.refused.append(f"{item.path}: {why}")
    # A file not stored is never written (no bytes to write) nor replaced (no undo for it).
    elif any(entry is not None and entry.kind == "b" for entry in (item.target, item.current)):
        plan.unrestorable.append(item.path)
    elif conflict:
        plan.conflicts.append(item)
    else:
        plan.restore.append(item)


def _odd(entry: Entry | None) -> str:
    """Why an entry is none a capture makes ('' when it is)."""
    if entry is None or entry.kind in ("b", "d"):
        return ""
    if entry.kind not in _KINDS:
        return f"a checkpoint entry of kind {entry.kind!r}"
    if len(entry.oid) != 40 or entry.oid.strip("0123456789abcdef"):
        return "a checkpoint entry naming no object"
    return ""


def plan_rewind(
    store: ObjectStore, records: list[Record], start: int, now: str, exclude: frozenset[str]
) -> RestorePlan:
    """Every path the chat changed after `records[start]` goes back to that record's state;
    a path the user changed as well is a conflict; paths only the user changed are left."""
    who = attribute(store, records, start, now)
    base = records[start].tree
    plan = RestorePlan()
    for path in sorted(who.chat):
        target, current = store.node(base, path), store.node(now, path)
        if not same(target, current):
            add_item(plan, Restore(path, target, current), path in who.user, exclude)
    return plan


def plan_undo(
    store: ObjectStore, rewound: Record, now: str, exclude: frozenset[str]
) -> RestorePlan:
    """Each path a rewind changed gets back what the rewind took from it; one changed since
    the rewind (not what the rewind left) is a conflict."""
    plan = RestorePlan()
    replaced, wrote = _writes(store, rewound)
    for path in sorted(replaced):
        try:
            target, left = entry_of(replaced[path]), entry_of(wrote.get(path))
        except (TypeError, ValueError) as exc:
            plan.refused.append(f"{path}: {exc}")
            continue
        current = store.node(now, path)
        if not same(target, current):
            add_item(plan, Restore(path, target, current), not same(left, current), exclude)
    return plan


def _writes(store: ObjectStore, rewound: Record) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """What each write of a rewind took and left, as its record keeps them. A record saved
    before rewinds kept them lists the paths written and the tree captured before: what
    that tree and the record's own hold at each path (as the undo then planned)."""
    data = rewound.rewind
    replaced, wrote = data.get("replaced"), data.get("wrote")
    if isinstance(replaced, dict) and isinstance(wrote, dict):
        return replaced, wrote
    written, before = data.get("written"), data.get("before")
    if not (isinstance(written, list) and isinstance(before, str) and before):
        raise ValueError("the rewind's record lists no paths it changed")
    paths = [path for path in written if isinstance(path, str) and path]
    took = {path: json_entry(store.node(before, path)) for path in paths}
    return took, {path: json_entry(store.node(rewound.tree, path)) for path in paths}


def entry_of(value: object) -> Entry | None:
    """An entry as a journal keeps it (a list of its fields, or null); ValueError when the
    value is none a rewind writes."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 7:
        raise ValueError("not a checkpoint entry")
    kind, mode, size, mtime, ctime, ino, oid = value
    numbers = (mode, size, mtime, ctime, ino)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise ValueError("not a checkpoint entry")
    if not isinstance(kind, str) or not isinstance(oid, str):
        raise ValueError("not a checkpoint entry")
    return Entry(kind, mode, size, mtime, ctime, ino, oid)


@dataclass
class Progress:
    """What a rewind, undo or revert did so far, as its record keeps it: the undo puts back
    what each write took (`replaced`) where it still finds what the write left (`wrote`)."""

    kind: Kind
    turn: int
    data: dict[str, Any]  # the record's `rewind`
    record: Record | None = None  # once the first batch is written
    marks: dict[str, Mark | None] = field(default_factory=dict)  # what each write left, seen

    def add(self, outcome: Outcome) -> None:
        """Keep one batch's writes (the first take of a path stands: it is what the rewind
        found there)."""
        replaced = self.data.setdefault("replaced", {})
        wrote = self.data.setdefault("wrote", {})
        for path, entry in outcome.replaced.items():
            replaced.setdefault(path, json_entry(entry))
        for path, entry in outcome.wrote.items():
            wrote[path] = json_entry(entry)
        self.marks.update(outcome.marks)
        written = self.data.setdefault("written", [])
        written += [path for path in outcome.done if path not in written]


def json_entry(entry: Entry | None) -> list[Any] | None:
    """An entry as a journal keeps it."""
    return None if entry is None else list(entry)
