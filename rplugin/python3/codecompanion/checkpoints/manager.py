"""The host's checkpoints: one store for every chat, captures and restores on one worker thread.

Every read and write of the store runs on a single worker thread, in the order asked: a
capture queued before a tool round is on disk before the round starts, pruning never races
a capture, and the event loop (and so Neovim) never waits on the disk. One exception keeps
that order: the capture before a tool round runs at once on the loop when the worker has
nothing queued and the project is small and unchanged, so its stat walk is all there is to do
(the two thread switches cost more than the walk).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .activity import Activity, Round
from .changes import (
    FileChange,
    Reader,
    attribute,
    changed_paths,
    file_change,
    file_changes,
    same,
    span,
)
from .journal import By, Journal, JournalFolder, Kind, Record, kept_objects
from .scan import DEFAULT_EXCLUDE, ScanCache, ScanLimits, cache_from_tree, capture, unchanged
from .store import Entry, ObjectStore

if TYPE_CHECKING:  # rewinds load their modules when the user asks for one
    from .restore import Outcome, Restore
    from .rewind import Progress, RestorePlan

log = logging.getLogger("codecompanion.checkpoints")
T = TypeVar("T")
P = ParamSpec("P")
# Files a project may have for a capture at once on the loop: their stat walk takes about a
# millisecond per hundred files (less when the process ran lately), none of their bytes is
# read there, and nothing is written but the journal.
AT_ONCE_FILES = 500


class Closed(RuntimeError):
    """Work asked of the checkpoints after the host began to close."""


@dataclass(frozen=True)
class Settings:
    """`opts["checkpoints"]` of the config file."""

    enabled: bool = True
    max_store_bytes: int = 1024 * 1024 * 1024
    limits: ScanLimits = field(default_factory=ScanLimits)

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any] | None) -> Settings:
        """Read the options, keeping the default for a missing or wrong value."""
        opts = opts or {}

        def number(key: str, default: float) -> float:
            value = opts.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
            return default

        extra = opts.get("exclude")
        names = [str(n) for n in extra] if isinstance(extra, (list, tuple)) else []
        limits = ScanLimits(
            exclude=frozenset((*DEFAULT_EXCLUDE, *names)),
            max_file_bytes=int(number("max_file_mb", 10) * 1024 * 1024),
            max_files=int(number("max_files", 100_000)),
        )
        return cls(
            enabled=opts.get("enabled", True) is not False,
            max_store_bytes=int(number("max_store_mb", 1024) * 1024 * 1024),
            limits=limits,
        )


@dataclass(frozen=True)
class Waiting:
    """A user turn sent while no capture was needed: recorded with the next one."""

    chat_id: str
    root: str
    number: int
    time: float
    text: str
    message_id: int


@dataclass
class TurnInfo:
    """What the rewind picker shows of one turn."""

    turn: int
    time: float
    text: str
    files: list[str]


@dataclass
class Restored:
    """What a rewind or an undo did to the files."""

    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # conflicts and unsaved buffers left as they are
    failed: list[str] = field(default_factory=list)  # "path: why", refused paths among them
    unrestorable: list[str] = field(default_factory=list)


class Checkpoints:
    """Captures, lists, diffs and restores checkpoints of every chat of one host."""

    def __init__(self, folder: Path, settings: Settings | None = None) -> None:
        self.folder = folder
        self.settings = settings or Settings()
        self.store = ObjectStore(folder)
        self.journals = JournalFolder(folder / "chats")
        self._open: dict[str, Journal] = {}
        self._caches: dict[str, ScanCache] = {}
        self.activity = Activity()  # who writes in the projects (the loop's thread only)
        self._size: int | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="checkpoints")
        # Work given to the worker and work it finished: each counted by one thread only.
        self._given = 0
        self._finished = 0
        self._closed = False

    # ----- the worker ----------------------------------------------------------------

    def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
        """Run `fn` on the worker thread, after everything queued before it (a future failed
        with Closed once the host is closing)."""
        try:
            return asyncio.wrap_future(self._submit(fn, *args, **kwargs))
        except RuntimeError:  # the worker is shut down: the host is exiting
            future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
            future.set_exception(Closed("checkpoints closed: the host is exiting"))
            future.exception()  # retrieved: nobody need await it
            return future

    def _submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Queue `fn` on the worker, counted until it has finished."""

        def counted() -> T:
            try:
                return fn(*args, **kwargs)
            finally:
                self._finished += 1  # on the worker: the loop sees it before the result

        future = self._worker.submit(counted)
        self._given += 1
        return future

    @property
    def idle(self) -> bool:
        """True when the worker has nothing queued or running (asked on the loop's thread)."""
        return not self._closed and self._given == self._finished

    def close(self) -> None:
        """Finish queued work and stop the worker."""
        self._closed = True
        self._worker.shutdown(wait=True)

    # ----- on the worker -------------------------------------------------------------

    def journal(self, chat_id: str, root: Path) -> Journal:
        """The chat's journal (loaded once); a chat that changed root starts a new one."""
        journal = self._open.get(chat_id)
        if journal is None or journal.root != str(root):
            journal = self.journals.load(chat_id, str(root))
            self._open[chat_id] = journal
        return journal

    def snapshot(self, root: Path) -> str:
        """Capture the project now (no record); its tree id."""
        key = str(root)
        cache = self._caches.get(key)
        if cache is None:
            cache = self._cache_from_journals(key)
        result, self._caches[key] = capture(root, self.store, cache, self.settings.limits)
        if self._size is not None:
            self._size += result.written
        if result.skipped:
            log.debug("checkpoint of %s left out %d files", root, len(result.skipped))
        return result.tree

    def _cache_from_journals(self, root: str) -> ScanCache:
        """After a restart: the newest tree of this root, so unchanged files are not read."""
        newest: tuple[float, str] | None = None
        for journal in self._open.values():
            if journal.root == root and journal.records:
                last = journal.records[-1]
                if newest is None or last.time > newest[0]:
                    newest = (last.time, last.tree)
        if newest is None:
            return ScanCache()
        try:
            return cache_from_tree(self.store, newest[1])
        except (OSError, ValueError):
            return ScanCache()

    def record(self, chat_id: str, root: Path, kind: Kind, by: By, **fields: Any) -> Record:
        """Capture the project and add a record to the chat's journal."""
        journal = self.journal(chat_id, root)
        record = self._add(journal, kind, by, self.snapshot(root), fields)
        self.journals.save(journal)
        return record

    def _add(
        self, journal: Journal, kind: Kind, by: By, tree: str, fields: dict[str, Any]
    ) -> Record:
        """Append a record of `tree` to the journal (not saved yet)."""
        turn = fields.pop("turn", None)
        if turn is None:
            turn = len(journal.turns()) + (1 if kind == "turn" else 0)
        record = Record(kind, by, tree, time.time(), turn, **fields)
        journal.records.append(record)
        return record

    def record_turns(self, waiting: list[Waiting]) -> list[Record]:
        """Turns sent before anything was captured, recorded now with one capture of each
        project: until a tool round writes, only the user can have changed the files since."""
        records, journals = self._add_turns(waiting, {})
        for journal in journals:
            self.journals.save(journal)
        return records

    def _add_turns(
        self, waiting: list[Waiting], trees: dict[str, str]
    ) -> tuple[list[Record], list[Journal]]:
        """Append the waiting turns (not saved yet); `trees` gets each project's capture."""
        records: list[Record] = []
        journals: dict[str, Journal] = {}
        for turn in waiting:
            root = Path(turn.root)
            if turn.root not in trees:
                trees[turn.root] = self.snapshot(root)
            journal = journals[turn.chat_id] = self.journal(turn.chat_id, root)
            record = Record(
                "turn",
                "user",
                trees[turn.root],
                turn.time,
                turn.number,
                text=turn.text,
                message_id=turn.message_id,
            )
            journal.records.append(record)
            records.append(record)
        return records, list(journals.values())

    def record_after_turns(
        self,
        waiting: list[Waiting],
        chat_id: str,
        root: Path,
        kind: Kind,
        by: By,
        trees: dict[str, str] | None = None,
        round: Round | None = None,
        **fields: Any,
    ) -> list[Record]:
        """The waiting turns, then a record of this kind, from one capture of the project
        (nothing ran in between; `trees` has the captures already taken) and one write of each
        journal. With `round`, the record's changes are credited by who was writing."""
        trees = {} if trees is None else trees
        records, journals = self._add_turns(waiting, trees)
        journal = self.journal(chat_id, root)
        tree = trees.get(str(root)) or self.snapshot(root)
        if round is not None and journal.records:
            previous = journal.records[-1].tree
            fields["user"], fields["both"] = self.credit(root, previous, tree, round)
        records.append(self._add(journal, kind, by, tree, fields))
        for touched in {id(j): j for j in (*journals, journal)}.values():
            self.journals.save(touched)
        return records

    def credit(
        self, root: Path, previous: str, tree: str, round: Round
    ) -> tuple[list[str], list[str]]:
        """Of the paths changed from tree `previous` to `tree` by a round, those the user
        changed instead and those either may have (each path's lstat read now)."""
        user: list[str] = []
        both: list[str] = []
        for path in sorted(changed_paths(self.store, previous, tree, folders=True)):
            now = self.store.node(tree, path)
            found = _lstat(root / path)
            folder = _lstat((root / path).parent) if now is None else None
            who = round.credit(path, now, found, folder)
            if who != "chat":
                (user if who == "user" else both).append(path)
        return user, both

    def record_soon(
        self,
        waiting: list[Waiting],
        chat_id: str,
        root: Path,
        kind: Kind,
        by: By,
        text: str = "",
        message_id: int = -1,
        at_once: bool = False,
        round: Round | None = None,
    ) -> asyncio.Future[list[Record]]:
        """`record_after_turns` on the worker; with `at_once`, done at once on the calling (the
        loop's) thread when the worker is idle and each project is small and unchanged (its stat
        walk is the whole capture). Either way on disk once the future is done."""
        roots = {turn.root for turn in waiting} | {str(root)}
        trees = self._unchanged(roots) if at_once else None
        if trees is None:
            return self.run(
                self.record_after_turns, waiting, chat_id, root, kind, by,
                round=round, text=text, message_id=message_id,
            )  # fmt: skip
        future: asyncio.Future[list[Record]] = asyncio.get_running_loop().create_future()
        try:
            records = self.record_after_turns(
                waiting, chat_id, root, kind, by, trees, round, text=text, message_id=message_id
            )
        except Exception as exc:  # as the worker's future would carry it
            future.set_exception(exc)
        else:
            future.set_result(records)
        return future

    def _unchanged(self, roots: set[str]) -> dict[str, str] | None:
        """Each project's last tree when the worker is idle and each, captured before with at
        most AT_ONCE_FILES files, is unchanged; None otherwise (the worker captures them)."""
        if not self.idle:
            return None
        trees: dict[str, str] = {}
        for key in sorted(roots):
            tree = self.still(Path(key))
            if tree is None:
                return None
            trees[key] = tree
        return trees

    def still(self, root: Path) -> str | None:
        """The tree of the project's last capture if a stat walk finds it unchanged (on the
        calling thread; asked only while the worker is idle); None when it changed, was never
        captured by this host, or has more than AT_ONCE_FILES files."""
        cache = self._caches.get(str(root))
        if cache is None or len(cache.files) > AT_ONCE_FILES:
            return None
        return unchanged(root, cache, self.settings.limits)

    def keep(self, waiting: list[Waiting]) -> None:
        """Record waiting turns on the worker without waiting for it (a chat closing)."""

        def record() -> None:
            try:
                self.record_turns(waiting)
            except (OSError, ValueError) as exc:
                log.warning("checkpoints: turns not recorded: %s", exc)

        try:
            self._submit(record)
        except RuntimeError:  # the worker is shut down: the host is exiting
            log.warning("checkpoints: %d turn(s) not recorded, the host is exiting", len(waiting))

    def turns(self, chat_id: str, root: Path) -> list[TurnInfo]:
        """The chat's live turns with the files the chat changed since each (newest last)."""
        journal = self.journal(chat_id, root)
        records = journal.records
        since: set[str] = set()
        found: list[TurnInfo] = []
        for index in range(len(records) - 1, -1, -1):
            record = records[index]
            if index + 1 < len(records) and records[index + 1].by == "chat":
                since |= span(self.store, record.tree, records[index + 1])[0]
            if record.kind == "turn" and not record.cut:
                found.append(TurnInfo(record.turn, record.time, record.text, sorted(since)))
        return found[::-1]

    def changes(self, chat_id: str, root: Path, since_turn: int | None) -> list[FileChange]:
        """Each file the chat changed since a turn (the first when None), from then to now."""
        journal = self.journal(chat_id, root)
        number = since_turn if since_turn is not None else 1
        start = journal.turn(number)
        if start is None:
            return []
        now = self.snapshot(root)
        chat = attribute(self.store, journal.records, start, now).chat
        return file_changes(self.store, chat, journal.records[start].tree, now)

    def turn_changes(self, chat_id: str, root: Path, turn: int) -> list[FileChange]:
        """What the chat's tool rounds of one turn changed, from the turn's start to its end."""
        journal = self.journal(chat_id, root)
        start = journal.turn(turn)
        if start is None:
            return []
        records = journal.records[start:]
        paths: set[str] = set()
        end = records[0].tree
        for previous, record in zip(records, records[1:], strict=False):
            if record.kind == "turn":
                break
            paths |= span(self.store, previous.tree, record)[0]
            end = record.tree
        return file_changes(self.store, paths, records[0].tree, end)

    def plan(
        self, chat_id: str, root: Path, turn: int
    ) -> tuple[Record, Record, RestorePlan] | None:
        """Record the state before a rewind and plan it: the turn's record, the state before
        and the plan; None when the turn is unknown."""
        journal = self.journal(chat_id, root)
        start = journal.turn(turn)
        if start is None:
            return None
        from .rewind import plan_rewind

        before = self.record(chat_id, root, "rewind", "user", turn=turn)
        exclude = self.settings.limits.exclude
        return (
            journal.records[start],
            before,
            plan_rewind(self.store, journal.records, start, before.tree, exclude),
        )

    def plan_undo(self, chat_id: str, root: Path) -> tuple[Record, Record, RestorePlan] | None:
        """Record the state before undoing the newest rewind and plan it; None when none."""
        journal = self.journal(chat_id, root)
        index = journal.last_rewind()
        if index is None:
            return None
        rewound = journal.records[index]
        before = self.record(chat_id, root, "undo", "user", turn=rewound.turn)
        from .rewind import plan_undo

        plan = plan_undo(self.store, rewound, before.tree, self.settings.limits.exclude)
        return rewound, before, plan

    def plan_revert(
        self, chat_id: str, root: Path, since_turn: int | None, path: str, hunk: int | None
    ) -> tuple[Record, str, RestorePlan] | None:
        """Review's revert of one file (or one of its hunks, by index) to the turn's state:
        the state before it recorded, the turn's tree, and the plan; None when out of date."""
        from .restore import Restore
        from .rewind import RestorePlan, add_item

        journal = self.journal(chat_id, root)
        number = since_turn if since_turn is not None else 1
        start = journal.turn(number)
        if start is None:
            return None
        base = journal.records[start].tree
        before = self.record(chat_id, root, "rewind", "user", turn=number)
        old, current = self.store.entry(base, path), self.store.entry(before.tree, path)
        target = old
        if hunk is not None:
            change = file_change(path, old, current, Reader(self.store))
            if change.binary or not 0 <= hunk < len(change.hunks):
                return None
            data = change.reverted(hunk)
            oid, _ = self.store.put(data)
            known = current or old
            mode = known.mode if known is not None else 0o644
            target = Entry("f", mode, len(data), 0, 0, 0, oid)
            if data == b"" and current is None:
                target = None
        if same(target, current):
            return None
        plan = RestorePlan()
        add_item(plan, Restore(path, target, current), False, self.settings.limits.exclude)
        return before, base, plan

    def restore(
        self, chat_id: str, root: Path, items: list[Restore], progress: Progress
    ) -> Outcome:
        """Write one batch of a rewind's paths, each checked first; its record (made by the
        first batch) then holds what every batch took and left, and the project as it is now:
        a failure after some writes leaves a record the undo can use."""
        from .activity import Round
        from .restore import apply

        outcome = apply(root, self.store, items)
        progress.add(outcome)
        journal = self.journal(chat_id, root)
        tree = self.snapshot(root)
        index = next((i for i, r in enumerate(journal.records) if r is progress.record), None)
        if index is None:
            fields = {"turn": progress.turn, "rewind": progress.data}
            progress.record = self._add(journal, progress.kind, "chat", tree, fields)
            index = len(journal.records) - 1
        record = journal.records[index]
        if index:
            previous, writes = journal.records[index - 1].tree, Round(wrote=progress.marks)
            record.user, record.both = self.credit(root, previous, tree, writes)
        record.tree, record.time = tree, time.time()
        self.journals.save(journal)
        return outcome

    def read(self, oid: str) -> bytes:
        """A stored blob."""
        return self.store.get(oid)

    def save(self, chat_id: str, root: Path) -> None:
        """Write the chat's journal (after a change of its records' flags)."""
        self.journals.save(self.journal(chat_id, root))

    def prune(self, active: set[str] | None = None) -> int:
        """Drop the oldest chats' checkpoints until the store fits its limit; bytes freed.

        Chats in `active` (by default every chat this host has used) are never dropped.
        """
        active = set(self._open) if active is None else active
        if self._size is None:
            self._size = self.store.size()
        if self._size <= self.settings.max_store_bytes:
            return 0
        if all(chat_id in active for chat_id in self.journals.ids()):
            return 0  # only chats in use hold the store: nothing to drop, no journal read
        freed = 0
        journals = sorted(self.journals.all())
        while self._size > self.settings.max_store_bytes and journals:
            _last, chat_id, _trees = journals.pop(0)
            if chat_id in active:
                continue
            self.journals.remove(chat_id)
            self._open.pop(chat_id, None)
            keep = self.store.reachable(t for _, _, trees in journals for t in trees)
            keep |= self.store.reachable(
                tree
                for journal in self._open.values()
                for r in journal.records
                for tree in (r.tree, str(r.rewind.get("before") or ""), *kept_objects(r.rewind))
            )
            freed += self.store.sweep(keep)
            self._caches.clear()  # their trees may be gone: the next capture reads anew
            self._size = self.store.size()
        log.info("checkpoints pruned: %d bytes freed", freed)
        return freed


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None
