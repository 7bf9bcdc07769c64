"""Putting files back as a checkpoint holds them: what to restore, what to ask, and the writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .changes import attribute, same
from .journal import Record
from .store import Entry, ObjectStore


@dataclass(frozen=True)
class Restore:
    """One path to put back: `target` is what it becomes (None: removed), `current` what it is."""

    path: str
    target: Entry | None
    current: Entry | None


@dataclass
class RestorePlan:
    """A rewind's or an undo's files: safe to restore, to ask about, and beyond restoring."""

    restore: list[Restore] = field(default_factory=list)
    conflicts: list[Restore] = field(default_factory=list)  # the user changed them too
    unrestorable: list[str] = field(default_factory=list)  # its bytes then or now not stored


def _add(plan: RestorePlan, item: Restore, conflict: bool) -> None:
    # A file not stored is never written (no bytes to write) nor replaced (no undo for it).
    if any(entry is not None and entry.kind == "b" for entry in (item.target, item.current)):
        plan.unrestorable.append(item.path)
    elif conflict:
        plan.conflicts.append(item)
    else:
        plan.restore.append(item)


def plan_rewind(store: ObjectStore, records: list[Record], start: int, now: str) -> RestorePlan:
    """Every file the chat changed after `records[start]` goes back to that record's state;
    a file the user changed as well is a conflict; files only the user changed are left."""
    who = attribute(store, records, start, now)
    base = records[start].tree
    plan = RestorePlan()
    for path in sorted(who.chat):
        target, current = store.entry(base, path), store.entry(now, path)
        if not same(target, current):
            _add(plan, Restore(path, target, current), path in who.user)
    return plan


def plan_undo(
    store: ObjectStore, before: str, after: str, now: str, paths: list[str]
) -> RestorePlan:
    """Files a rewind wrote go back to `before`; one changed since the rewind is a conflict."""
    plan = RestorePlan()
    for path in sorted(paths):
        target, current = store.entry(before, path), store.entry(now, path)
        if not same(target, current):
            _add(plan, Restore(path, target, current), not same(store.entry(after, path), current))
    return plan


def inside(root: Path, path: Path) -> bool:
    """Whether `path`'s folder, links resolved, is `root` or below it."""
    real_root = os.path.realpath(root)
    parent = os.path.realpath(path.parent)
    return parent == real_root or parent.startswith(real_root + os.sep)


def apply(
    root: Path, store: ObjectStore, items: list[Restore], tree: str
) -> tuple[list[str], list[str]]:
    """Write each item's target (or remove its file, and the folders left empty that `tree`
    does not hold); the paths done and one line per failure."""
    done: list[str] = []
    failed: list[str] = []
    for item in items:
        path = root / item.path
        try:
            if not inside(root, path):
                raise OSError("its folder is outside the project (a link)")
            if item.target is None:
                _remove(root, path, lambda rel: store.has_folder(tree, rel))
            else:
                _write(path, item.target, store.get(item.target.oid))
            done.append(item.path)
        except (OSError, ValueError) as exc:
            failed.append(f"{item.path}: {exc}")
    return done, failed


def _remove(root: Path, path: Path, kept: Callable[[str], bool]) -> None:
    """Remove a file, then the folders it leaves empty unless `kept` (they were there)."""
    if os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            raise OSError("it is a folder now")
        os.unlink(path)
    folder = path.parent
    while folder != root and folder.is_relative_to(root):
        if kept(folder.relative_to(root).as_posix()):
            break
        try:
            folder.rmdir()  # only an empty one
        except OSError:
            break
        folder = folder.parent


def _write(path: Path, target: Entry, data: bytes) -> None:
    """Put bytes and mode back through a temp file and a rename (a link as a link)."""
    if os.path.isdir(path) and not os.path.islink(path):
        raise OSError("it is a folder now")
    path.parent.mkdir(parents=True, exist_ok=True)
    if target.kind == "l":
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(os.fsdecode(data), path)
        return
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.rewind")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), stat.S_IMODE(target.mode))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
