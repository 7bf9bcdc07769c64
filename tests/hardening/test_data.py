"""Data: edits never save the user's other changes or overwrite a file changed since it was read,
saved chats survive a kill in the middle of a write, and a chat a crash left with unanswered
calls loads as a valid history."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codecompanion.messages import Message, MessageStore, ToolCall
from codecompanion.persistence.history import ChatStore
from codecompanion.ports import HunkDecision
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import FakeEditor, RecordingChat
from tests.support.shapes import check_saved_messages
from tests.support.tools import builtin_system

ORIGINAL = "alpha\nbeta\ngamma\n"


def make_system(root: Path, editor: FakeEditor | None) -> tuple[ToolSystem, RecordingChat]:
    return builtin_system(root, "files", editor=editor)


def edit_call(mode: str | None = None, old: str = "gamma", new: str = "GAMMA") -> ToolCall:
    # An overwrite names no part of the file (one that does is applied as an edit).
    edits = [{"oldText": "" if mode == "overwrite" else old, "newText": new, "replaceAll": False}]
    args = {"filepath": "notes.txt", "edits": edits, "explanation": "x", "mode": mode}
    return ToolCall("e", "insert_edit_into_file", args)


def reviewing(action: Callable[[], Any]) -> FakeEditor:
    """An editor whose diff review does `action` (someone else's change) and accepts all."""

    def review(path: str, old: list[str], new: list[str]) -> HunkDecision:
        action()
        return HunkDecision(accepted=tuple(range(10)))

    return FakeEditor(review=review)


@pytest.mark.parametrize("mode", [None, "overwrite"])
async def test_an_edit_of_a_loaded_buffer_never_saves_the_users_other_changes(
    tmp_path: Path, mode: str | None
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(ORIGINAL)
    editor = FakeEditor(buffers={str(target): ["ALPHA typed, not saved", "beta", "gamma"]})
    system, chat = make_system(tmp_path, editor)
    call = edit_call(mode, new="GAMMA" if mode is None else "only this\n")
    await system.run([call])
    assert not chat.result("e").is_error, chat.result("e").for_llm
    assert target.read_text() == ORIGINAL  # nothing saved
    expected = ["ALPHA typed, not saved", "beta", "GAMMA"] if mode is None else ["only this"]
    assert editor.buffers[str(target)] == expected


def change(target: Path) -> Callable[[], Any]:
    return lambda: target.write_text("someone else's work\n")


def delete(target: Path) -> Callable[[], Any]:
    return lambda: target.unlink()


def same_size(target: Path) -> Callable[[], Any]:
    return lambda: target.write_text(ORIGINAL.upper())


@pytest.mark.parametrize("mode", [None, "overwrite"])
@pytest.mark.parametrize("meanwhile", [change, delete, same_size])
async def test_a_file_changed_during_its_review_is_never_overwritten_unseen(
    tmp_path: Path, mode: str | None, meanwhile: Callable[[Path], Callable[[], Any]]
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(ORIGINAL)
    action = meanwhile(target)
    done: list[bool] = []

    def once() -> None:  # someone else's change while the first review is open
        if not done:
            done.append(True)
            action()

    editor = reviewing(once)
    system, chat = make_system(tmp_path, editor)
    await system.run([edit_call(mode)])
    result = chat.result("e")
    changed = None if meanwhile is delete else target.read_text()
    if meanwhile is delete or mode is None:  # `gamma` is gone from their text
        # Nothing to edit any more: refused, their change (or deletion) stands.
        assert result.is_error and "nothing was written" in result.for_llm, result.for_llm
        assert len(editor.reviews) == 1
        assert target.exists() == (meanwhile is not delete)
        if changed is not None:
            assert changed in ("someone else's work\n", ORIGINAL.upper())
    else:
        # The user was asked again, about the change to what is there now, and accepted it.
        assert not result.is_error, result.for_llm
        assert len(editor.reviews) == 2
        seen = editor.reviews[1][1]
        assert (
            seen
            == ("someone else's work\n" if meanwhile is change else ORIGINAL.upper()).split("\n")[
                :-1
            ]
        )
    assert [p.name for p in tmp_path.iterdir()] == (["notes.txt"] if changed is not None else [])


async def test_a_file_created_while_create_file_waited_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    system, chat = make_system(tmp_path, reviewing(lambda: target.write_text("theirs\n")))
    await system.run([ToolCall("c", "create_file", {"filepath": "new.txt", "content": "ours\n"})])
    assert chat.result("c").is_error and "already exists" in chat.result("c").for_llm
    assert target.read_text() == "theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]


async def test_an_edit_after_the_user_changed_the_file_keeps_their_change(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(ORIGINAL)
    system, chat = make_system(tmp_path, None)
    read = {"filepath": "notes.txt", "start_line_number_base_zero": 0}
    await system.run([ToolCall("r", "read_file", {**read, "end_line_number_base_zero": -1})])
    target.write_text("user line\n" + ORIGINAL)  # the user edits between two tool calls
    await system.run([edit_call()])
    assert not chat.result("e").is_error
    assert target.read_text() == "user line\nalpha\nbeta\nGAMMA\n"


# ---- saved chats ---------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from codecompanion.persistence.history import ChatStore
    store = ChatStore(sys.argv[1])
    body = "x" * 400_000
    round_ = 0
    while True:
        messages = [{"role": "user", "content": f"{round_}:{i}:" + body} for i in range(5)]
        print("start", round_, flush=True)
        store.save("big", {"id": "big", "round": round_, "messages": messages})
        round_ += 1
    """
)


def complete(state: dict[str, Any]) -> bool:
    """True when the saved state is one whole round (every message of that round, full size)."""
    round_ = state["round"]
    contents = [m["content"] for m in state["messages"]]
    return len(contents) == 5 and all(
        c.startswith(f"{round_}:{i}:") and len(c) == len(f"{round_}:{i}:") + 400_000
        for i, c in enumerate(contents)
    )


def test_a_saved_chat_survives_a_kill_in_the_middle_of_a_write(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    rng = random.Random(7)
    rounds: list[int] = []
    torn = 0
    # At least 8 kills, and more (up to 40) until one has landed inside a write: how long the
    # encoding and the write take depends on the machine's load.
    for attempt in range(40):
        if attempt >= 8 and torn:
            break
        command = [sys.executable, "-c", WRITER, str(folder)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, env=env) as writer:
            try:
                # Kill during the save of a varying round, at a varying point of it (a fraction
                # of how long the last save took): a wall-clock delay alone lands every kill in
                # the first save on a loaded machine, or between saves when saving is fast.
                assert writer.stdout is not None
                target = rng.randint(2, 5)
                starts = []
                while True:
                    line = writer.stdout.readline()
                    starts.append(time.monotonic())
                    if int(line.split()[1]) >= target:
                        break
                time.sleep(rng.uniform(0.3, 0.9) * (starts[-1] - starts[-2]))
            finally:
                writer.send_signal(signal.SIGKILL)
        state = json.loads((folder / "big.json").read_text())
        assert complete(state)
        rounds.append(state["round"])
        torn += bool(list(folder.glob(".big.*.tmp")))  # the next save sweeps it: count it now
    assert ChatStore(folder).load("big") is not None
    assert [info.id for info in ChatStore(folder).list()] == ["big"]
    assert len(set(rounds)) > 1  # the kills really landed at different points
    assert torn  # and some in the middle of a write


def test_temp_files_left_by_a_killed_save_are_swept(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    store.save("c1", {"messages": []})
    stale = tmp_path / ".c1.abandoned.tmp"
    stale.write_text("half a chat")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = tmp_path / ".c1.in-progress.tmp"  # another writer's, still being written
    fresh.write_text("{")
    other = tmp_path / ".c2.abandoned.tmp"
    other.write_text("someone else's")
    os.utime(other, (old, old))
    saved = {"messages": [{"role": "user", "content": "x"}]}
    store.save("c1", saved)
    assert not stale.exists()
    assert fresh.exists() and other.exists()
    assert store.load("c1") == saved


# ---- a chat saved while tools ran --------------------------------------------------------


def saved(*messages: Message) -> list[dict[str, Any]]:
    store = MessageStore()
    for message in messages:
        store.add(message)
    return store.to_list()


def calls(*ids: str) -> Message:
    return Message(
        role="llm", visible=False, tool_calls=[ToolCall(i, "read_file", {}) for i in ids]
    )


def result(call_id: str) -> Message:
    return Message(role="tool", content="ok", tool_call_id=call_id, tool_name="read_file")


@pytest.mark.parametrize(
    "history",
    [
        [Message(role="user", content="q"), calls("a", "b")],
        [Message(role="user", content="q"), calls("a", "b"), result("a")],
        [
            Message(role="user", content="q"),
            calls("a", "b"),
            result("b"),
            Message(role="user", content="next"),
        ],
    ],
    ids=["none-answered", "one-answered", "user-went-on"],
)
def test_calls_a_crash_left_unanswered_get_a_result_on_load(history: list[Message]) -> None:
    store = MessageStore.from_list(saved(*history))
    data = store.to_list()
    check_saved_messages(data)
    roles = [m["role"] for m in data]
    first_tool = roles.index("tool")
    assert roles[first_tool : first_tool + 2] == ["tool", "tool"]  # results right after the calls
    fixed = [m for m in data if (m.get("extra") or {}).get("interrupted")]
    assert fixed and all(m["tools"]["is_error"] for m in fixed)
    assert "did not finish" in fixed[0]["content"]
    assert len({m["_meta"]["id"] for m in data}) == len(data)
    assert [m["_meta"]["index"] for m in data] == list(range(len(data)))


def test_a_complete_history_loads_unchanged() -> None:
    history = saved(Message(role="user", content="q"), calls("a"), result("a"))
    assert MessageStore.from_list(history).to_list() == history


def test_an_answers_calls_get_ids_unused_in_the_history_and_by_each_other() -> None:
    store = MessageStore()
    calls = [ToolCall("a", "echo", {}), ToolCall("x", "echo", {})]
    store.add(Message(role="llm", visible=False, tool_calls=calls))
    store.add(Message(role="tool", content="r", tool_call_id="x", tool_name="echo"))
    name = store.unique_calls([ToolCall("b", "echo", {})])
    named = [name(ToolCall(i, "echo", {"n": n})) for n, i in enumerate(["a", "a", "b", "x", "c"])]
    assert [c.id for c in named] == ["a_2", "a_3", "b_2", "x_2", "c"]
    assert [c.arguments for c in named] == [{"n": n} for n in range(5)]
