"""Property: whatever tool edits, command writes and user edits happen, a rewind and its undo
never lose a byte."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.checkpoints import store
from tests.support.checkpoints import Driver, state, write

NAMES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.bin", "e.txt"]
contents = st.one_of(st.none(), st.binary(max_size=40), st.sampled_from([b"", b"same\n"]))
writes = st.dictionaries(st.sampled_from(NAMES), contents, min_size=1, max_size=3)
step = st.one_of(
    st.tuples(st.just("turn"), st.just({})),
    st.tuples(st.just("tool"), writes),  # an edit tool or a command: a round of writes
    st.tuples(st.just("user"), writes),  # by hand, between rounds
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.dictionaries(st.sampled_from(NAMES), st.binary(max_size=20), max_size=4),
    steps=st.lists(step, min_size=1, max_size=12),
    take=st.booleans(),
    pick=st.integers(min_value=0),
    packed=st.booleans(),
)
def test_rewind_then_undo_never_loses_a_byte(
    start: dict[str, bytes],
    steps: list[tuple[str, dict[str, bytes | None]]],
    take: bool,
    pick: int,
    packed: bool,
) -> None:
    store.PACK_MIN = 1 if packed else 64  # every capture's objects in a pack, or loose
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "p"
    root.mkdir()
    write(root, dict(start))
    d = Driver(root, tmp / "data")
    try:
        d.turn()
        snapshots = {1: state(root)}
        chat_touched: dict[int, set[str]] = {1: set()}
        user_touched: dict[int, set[str]] = {1: set()}
        for kind, changes in steps:
            if kind == "turn":
                d.turn()
                snapshots[d.turn_no] = state(root)
                chat_touched[d.turn_no], user_touched[d.turn_no] = set(), set()
            elif kind == "tool":
                before = state(root)
                d.tool_round(changes)
                for turn in chat_touched:
                    chat_touched[turn] |= _changed(before, state(root))
            else:
                before = state(root)
                write(root, changes)
                for turn in user_touched:
                    user_touched[turn] |= _changed(before, state(root))
        turn = 1 + pick % d.turn_no
        before_rewind = state(root)
        d.rewind(turn, take_conflicts=take)
        after = state(root)
        base = snapshots[turn]
        for path in set(before_rewind) | set(after) | set(base):
            chat, user = path in chat_touched[turn], path in user_touched[turn]
            if chat and (take or not user):
                assert after.get(path) == base.get(path), path
            elif not chat:
                assert after.get(path) == before_rewind.get(path), path
        d.undo()
        assert state(root) == before_rewind
    finally:
        store.PACK_MIN = 64
        d.cp.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _changed(old: dict[str, tuple[int, bytes]], new: dict[str, tuple[int, bytes]]) -> set[str]:
    return {p for p in set(old) | set(new) if old.get(p) != new.get(p)}
