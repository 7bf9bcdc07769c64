"""Property: whatever the chat's commands and file tools write, whatever the user changes by
hand, saves from Neovim during a round or while the rewind asks, whatever the names (bytes that
are not UTF-8), whatever swaps of files, links and folders, a rewind never loses a byte of the
user's, and its undo brings back exactly what was there when it wrote."""

from __future__ import annotations

import os
import shutil
import tempfile
from itertools import cycle
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.checkpoints import store
from codecompanion.checkpoints.restore import Restore
from tests.support.checkpoints import Driver, Put, Shape, put_all, shape

ODD = os.fsdecode(b"\xff\xfe.txt")  # not UTF-8: held with surrogate escapes
FILES = ["a.txt", "sub/c.txt", "sub/deep/d.bin", ODD, "d/x.txt"]
ANY = [*FILES, "d", "e", "sub", "sub/deep"]
SAVED = ["a.txt", ODD, "notes.txt"]  # what Neovim saves: files at the top
contents = st.one_of(st.binary(max_size=12), st.sampled_from([b"", b"same\n"]))
value = st.one_of(
    st.none(),
    contents,
    st.sampled_from(
        [("dir",), ("link", "a.txt"), ("link", "../out"), ("mode", 0o755), ("mode", 0o700)]
    ),
)
by_hand = st.dictionaries(st.sampled_from(ANY), value, min_size=1, max_size=3)
by_command = st.dictionaries(st.sampled_from(ANY), value, min_size=1, max_size=3)
by_file_tool = st.dictionaries(st.sampled_from(FILES), st.one_of(st.none(), contents), max_size=2)
saves = st.dictionaries(st.sampled_from(SAVED), contents, max_size=2)
step = st.one_of(
    st.tuples(st.just("turn"), st.just({}), st.just({})),
    st.tuples(st.just("command"), by_command, saves),  # the user saves while it runs
    st.tuples(st.just("file_tool"), by_file_tool, st.just({})),
    st.tuples(st.just("user"), by_hand, st.just({})),  # by hand, between rounds
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.dictionaries(st.sampled_from(FILES), contents, max_size=4),
    steps=st.lists(step, min_size=1, max_size=10),
    answers=st.lists(st.booleans(), min_size=1, max_size=4),
    asked_save=saves,
    pick=st.integers(min_value=0),
    packed=st.booleans(),
)
def test_rewind_then_undo_never_loses_a_byte(
    start: dict[str, bytes],
    steps: list[tuple[str, dict[str, Put], dict[str, Put]]],
    answers: list[bool],
    asked_save: dict[str, Put],
    pick: int,
    packed: bool,
) -> None:
    store.PACK_MIN = 1 if packed else 64  # every capture's objects in a pack, or loose
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "p"
    root.mkdir()
    put_all(root, dict(start))
    d = Driver(root, tmp / "data")
    try:
        owner = _Owners(root)
        d.turn()
        snapshots = {1: shape(root)}
        since: dict[int, set[bytes]] = {1: set()}  # what the user changed since each turn
        for kind, chat, user in steps:
            if kind == "turn":
                owner.captured()
                d.turn()
                snapshots[d.turn_no], since[d.turn_no] = shape(root), set()
                continue
            if kind == "user":
                owner.after("user", lambda chat=chat: put_all(root, chat))  # type: ignore[misc]
            elif kind == "file_tool":
                owner.after("chat", lambda chat=chat: d.file_tool_round(chat))  # type: ignore[misc]
            else:
                owner.command(d, chat, user)
            for touched in since.values():
                touched |= owner.last_user
        turn = 1 + pick % d.turn_no
        _rewind_and_undo(d, turn, owner, answers, asked_save, snapshots[turn], since[turn])
    finally:
        store.PACK_MIN = 64
        d.cp.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _rewind_and_undo(
    d: Driver,
    turn: int,
    owner: _Owners,
    answers: list[bool],
    asked_save: dict[str, Put],
    base: Shape,
    user_since: set[bytes],
) -> None:
    """Rewind to `turn` (the tree was `base`), the user saving while the first question is
    open. Every path the user changed last is as it was unless the user was asked and took
    the checkpoint; every path only the chat changed since is back as `base` holds it; and
    the undo gives back the tree exactly as the rewind found it when it wrote."""
    taken: set[bytes] = set()
    replies = cycle(answers)
    found = owner.tree  # as the rewind finds it when it writes (after the save)
    asked: list[str] = []

    owner.captured()  # the rewind's own, before it plans

    def ask(item: Restore) -> bool:
        nonlocal found
        if not asked and asked_save:  # while the first question is open
            owner.after("user", lambda: put_all(d.root, asked_save))
            found = owner.tree
        asked.append(item.path)
        take = next(replies)
        if take:
            taken.add(os.fsencode(item.path))
        return take

    done = d.rewind_asking(turn, ask)
    after = shape(d.root)
    spared = {os.fsencode(line.split(": ", 1)[0]) for line in done.failed}
    spared |= {os.fsencode(path) for path in done.kept} | taken
    made = {p for w in map(os.fsencode, done.written) for p in _folders_of(w)}
    for path in set(owner.last) | set(after):
        if _near(path, taken):
            continue
        if owner.last.get(path) == "user":
            if found.get(path) is None and _is_folder(after.get(path)) and path in made:
                continue  # a folder the user removed, made again for a file put back in it
            assert after.get(path) == found.get(path), ("the user's", path, done)
        elif path not in user_since and owner.last.get(path) == "chat" and not _near(path, spared):
            assert after.get(path) == base.get(path), ("the chat's", path, done)
    d.undo_asking(lambda item: True)
    assert shape(d.root) == found


def _is_folder(found: tuple[object, ...] | None) -> bool:
    return found is not None and found[0] == "d"


def _folders_of(path: bytes) -> list[bytes]:
    parts = path.split(b"/")
    return [b"/".join(parts[:n]) for n in range(1, len(parts))]


def _near(path: bytes, paths: set[bytes]) -> bool:
    """Whether `path` is one of `paths`, or in a folder of them, or a folder of one."""
    return any(path == p or path.startswith(p + b"/") or p.startswith(path + b"/") for p in paths)


class _Owners:
    """Who last changed each path of the tree (by its name as bytes), as captures see it: the
    user's changes between two captures count by where they end (a file deleted and written
    again with the same bytes is not a change)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tree = shape(root)
        self.last: dict[bytes, str] = {path: "user" for path in self.tree}
        self.last_user: set[bytes] = set()
        self._span: tuple[Shape, dict[bytes, str]] | None = None  # since the last capture

    def captured(self) -> None:
        """A capture: the user's changes so far are settled."""
        self._span = None

    def after(self, who: str, change: Any) -> None:
        """Run `change`; every path it changed is `who`'s (a round's: captured around it)."""
        if who == "chat":
            self.captured()
        if self._span is None:
            self._span = (self.tree, dict(self.last))
        start, owners = self._span
        change()
        now = shape(self.root)
        changed = {p for p in set(start) | set(now) if start.get(p) != now.get(p)}
        for path in set(self.last) | changed:
            if path in changed:
                self.last[path] = who
            elif path in owners:
                self.last[path] = owners[path]
        self.last_user = changed if who == "user" else set()
        self.tree = now
        if who == "chat":
            self.captured()

    def command(self, d: Driver, chat: dict[str, Put], saves: dict[str, Put]) -> None:
        """A command's round in which Neovim saves: the command's paths, then the saves."""
        self.captured()
        mid: dict[str, Shape] = {}
        before = self.tree
        d.command_round(chat, saves, between=lambda: mid.setdefault("tree", shape(self.root)))
        now = shape(self.root)
        middle = mid["tree"]
        chat_changed = {p for p in set(before) | set(middle) if before.get(p) != middle.get(p)}
        user_changed = {p for p in set(middle) | set(now) if middle.get(p) != now.get(p)}
        # Saved with the bytes the command wrote: still the user's save, if the round changed
        # the file at all (a capture sees no change otherwise).
        saved = {os.fsencode(path) for path in saves}
        user_changed |= {p for p in saved if before.get(p) != now.get(p)}
        # A path the round left as it found it (removed by the command, saved back by the
        # user with the same bytes) is no change a capture sees: it keeps its owner.
        unseen = {p for p in chat_changed | user_changed if before.get(p) == now.get(p)}
        for path in chat_changed - unseen:
            self.last[path] = "chat"
        for path in user_changed - unseen:
            self.last[path] = "user"
        self.last_user = user_changed - unseen
        self.tree = now
