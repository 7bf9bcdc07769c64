"""A chat's checkpoints through its turn loop: summaries, rewinding code and conversation, undo."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters.base import Finish, TextDelta, ToolCallEvent
from codecompanion.chat.chat import Chat
from codecompanion.checkpoints import ChatCheckpoints, Checkpoints, scan
from codecompanion.checkpoints import manager as checkpoints_manager
from codecompanion.messages import ToolCall
from codecompanion.render_ops import Append, Block, Event, SetVar
from tests.support.chat import EchoTool, RecordingView, ScriptedAdapter, make_chat
from tests.support.checkpoints import write

CHECKPOINTS = "codecompanion_checkpoints"


@dataclass
class Asker:
    """Scripted answers; every question kept."""

    take: bool = True
    overwrite: bool = False
    modified: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)

    async def conflict(self, chat_id: str, path: str, mine: Any, checkpoint: Any) -> bool:
        self.asked.append(f"conflict {path}")
        return self.take

    async def unsaved(self, paths: list[str]) -> list[str]:
        return [p for p in paths if p in self.modified]

    async def overwrite_unsaved(self, chat_id: str, path: str) -> bool:
        self.asked.append(f"unsaved {Path(path).name}")
        return self.overwrite

    async def reload(self, paths: list[str]) -> None:
        self.reloaded += paths


def edit(call_id: str, **files: str | None) -> list[Any]:
    return [ToolCallEvent(ToolCall(call_id, "write_things", dict(files))), Finish("tool_calls")]


async def turn(chat: Chat, text: str) -> None:
    assert chat.submit(text)
    while chat.busy:
        await asyncio.sleep(0.01)


def checkpointed(
    adapter: ScriptedAdapter, root: Path, data: Path, asker: Asker | None = None
) -> tuple[Chat, RecordingView, Checkpoints]:
    """A chat whose tools write in `root`, with its checkpoints kept under `data`."""
    chat, view = make_chat(adapter, tools=EchoTool(root))
    manager = Checkpoints(data)
    chat.checkpoints = ChatCheckpoints(chat, manager, asker or Asker())
    return chat, view, manager


async def test_three_turns_rewound_and_undone(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"a.py": b"a0\n", "gone.txt": b"bye\n", "mine.txt": b"m0\n", "open.py": b"o0\n"})
    adapter = ScriptedAdapter(
        edit("c1", **{"a.py": "a1\n", "new.py": "n1\n"}),
        [TextDelta("one")],
        edit("c2", **{"gone.txt": None, "out.txt": "written by a command\n", "open.py": "o1\n"}),
        [TextDelta("two")],
        edit("c3", **{"a.py": "a3\n"}),
        [TextDelta("three")],
    )
    chat, view = make_chat(adapter, tmp_path, tools=EchoTool(root))
    asker = Asker(modified=[str(root / "open.py")])
    manager = Checkpoints(tmp_path / "data")
    chat.checkpoints = ChatCheckpoints(chat, manager, asker)
    await turn(chat, "first\nmore")
    write(root, {"mine.txt": b"m1 by hand\n"})
    await turn(chat, "second")
    await turn(chat, "third")
    blocks = [op.text for op in view.ops if isinstance(op, Block)]
    assert "_2 files changed: a.py +1 −1, new.py (new) +1_" in blocks
    assert "_1 file changed: a.py +1 −1_" in blocks
    from codecompanion.chat import transcript

    replayed = transcript.replay(chat.messages, "a", None)
    shown = [op.wire().get("text") for op in replayed]
    assert "_1 file changed: a.py +1 −1_" in shown  # a restored chat shows the lines again
    after3 = {p.name: p.read_bytes() for p in root.iterdir()}
    turns = await chat.checkpoints.turns()
    assert [(t.turn, t.text) for t in turns] == [(1, "first"), (2, "second"), (3, "third")]
    assert turns[1].files == ["a.py", "gone.txt", "open.py", "out.txt"]

    assert await chat.checkpoints.rewind(1, code=True, conversation=False)
    assert asker.asked == ["unsaved open.py"]  # refused: open.py stays as the chat left it
    now = {p.name: p.read_bytes() for p in root.iterdir()}
    assert now == {
        "a.py": b"a0\n",
        "gone.txt": b"bye\n",
        "mine.txt": b"m1 by hand\n",
        "open.py": b"o1\n",
    }
    assert sorted(Path(p).name for p in asker.reloaded) == ["a.py", "gone.txt", "new.py", "out.txt"]
    assert await chat.checkpoints.undo()
    assert {p.name: p.read_bytes() for p in root.iterdir()} == after3

    assert await chat.checkpoints.rewind(2, code=False, conversation=True)
    assert [m.content for m in chat.messages if m.role == "user"] == ["first\nmore"]
    saved = json.loads((tmp_path / "chats" / "c1.json").read_text())
    assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == ["first\nmore"]
    last = view.ops[-1]
    assert isinstance(last, Event) and last.name == "Rewind"
    assert any(isinstance(op, Append) and op.text == "second" for op in view.ops[-12:])
    assert [t.turn for t in await chat.checkpoints.turns()] == [1]
    assert await chat.checkpoints.undo()
    assert [m.content for m in chat.messages if m.role == "user"] == [
        "first\nmore",
        "second",
        "third",
    ]
    assert [t.turn for t in await chat.checkpoints.turns()] == [1, 2, 3]
    assert {"Checkpoint", "Rewind"} <= set(view.events())
    manager.close()


async def test_a_chat_in_the_home_folder_takes_no_checkpoints(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    adapter = ScriptedAdapter(edit("c1", **{"a.py": "a1\n"}), [TextDelta("one")])
    chat, _view, manager = checkpointed(adapter, tmp_path, tmp_path / ".local" / "data")
    await turn(chat, "hello")
    assert (tmp_path / "a.py").read_text() == "a1\n"
    assert not (tmp_path / ".local" / "data" / "objects").exists()
    manager.close()


def listed(view: RecordingView) -> list[tuple[int, str, list[str]]]:
    """The turn list the chat last gave Lua."""
    last = [op for op in view.ops if isinstance(op, SetVar) and op.name == CHECKPOINTS][-1]
    return [(t["turn"], t["text"], t["files"]) for t in last.value]


async def test_a_turn_is_captured_when_a_tool_round_first_writes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"a.py": b"a0\n"})
    adapter = ScriptedAdapter(
        [TextDelta("just talk")],
        edit("c1", **{"a.py": "a1\n"}),
        [TextDelta("edited")],
        [TextDelta("talk again")],
    )
    data = tmp_path / "data"
    chat, view, manager = checkpointed(adapter, root, data)
    await turn(chat, "talk")
    # Nothing written: no capture, no journal, yet the turn is listed for the rewind picker.
    assert not (data / "chats").exists() and "Checkpoint" not in view.events()
    assert listed(view) == [(1, "talk", [])]
    write(root, {"mine.txt": b"by hand\n"})  # the user, between the turns
    await turn(chat, "edit")
    assert listed(view) == [(1, "talk", ["a.py"]), (2, "edit", ["a.py"])]
    await turn(chat, "talk again")
    assert listed(view) == [(1, "talk", ["a.py"]), (2, "edit", ["a.py"]), (3, "talk again", [])]
    # Back to before the first turn: the chat's edit is undone, the user's file stays.
    assert await chat.checkpoints.rewind(1, code=True, conversation=True)
    assert (root / "a.py").read_bytes() == b"a0\n"
    assert (root / "mine.txt").read_bytes() == b"by hand\n"
    assert [m.content for m in chat.messages if m.role == "user"] == []
    assert await chat.checkpoints.undo()
    assert (root / "a.py").read_bytes() == b"a1\n"
    assert [t.turn for t in await chat.checkpoints.turns()] == [1, 2, 3]
    manager.close()


async def test_turns_not_captured_yet_are_recorded_when_the_chat_closes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"a.py": b"a0\n"})
    adapter = ScriptedAdapter([TextDelta("one")], [TextDelta("two")])
    chat, _view, manager = checkpointed(adapter, root, tmp_path / "data")
    await turn(chat, "first")
    await turn(chat, "second")
    chat.checkpoints.close()
    manager.close()
    journal = manager.journals.load("c1", str(root))
    assert [(r.kind, r.turn, r.text) for r in journal.records] == [
        ("turn", 1, "first"),
        ("turn", 2, "second"),
    ]
    again = Checkpoints(tmp_path / "data")
    assert [t.turn for t in again.turns("c1", root)] == [1, 2]
    again.close()


class CountingCheckpoints(Checkpoints):
    """Real checkpoints that count their scans of the project."""

    scans = 0

    def snapshot(self, root: Path) -> str:
        self.scans += 1
        return super().snapshot(root)


async def test_turns_waiting_and_the_tool_rounds_capture_take_one_scan(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"a.py": b"a0\n"})
    adapter = ScriptedAdapter(
        [TextDelta("just talk")], edit("c1", **{"a.py": "a1\n"}), [TextDelta("edited")]
    )
    chat, _view = make_chat(adapter, tools=EchoTool(root))
    manager = CountingCheckpoints(tmp_path / "data")
    chat.checkpoints = ChatCheckpoints(chat, manager, Asker())
    await turn(chat, "talk")
    await turn(chat, "edit")
    await asyncio.sleep(0.2)  # the capture after the round waits a moment
    manager.close()
    records = manager.journals.load("c1", str(root)).records
    assert [(r.kind, r.turn) for r in records] == [
        ("turn", 1),
        ("turn", 2),
        ("tools", 2),
        ("tools_done", 2),
    ]
    # The two turns and the capture before the round are one scan; after the round, another.
    assert len({r.tree for r in records[:3]}) == 1 and records[3].tree != records[2].tree
    assert manager.scans == 2


class WalkNotingCheckpoints(Checkpoints):
    """Real checkpoints that note each look at the project: a capture, or a check that it is
    unchanged (hit or miss), and whether it ran on the loop's thread."""

    def __init__(self, folder: Path, loop_thread: int) -> None:
        super().__init__(folder)
        self.loop_thread = loop_thread
        self.walks: list[tuple[str, bool]] = []

    def snapshot(self, root: Path) -> str:
        self.walks.append(("capture", threading.get_ident() == self.loop_thread))
        return super().snapshot(root)

    def still(self, root: Path) -> str | None:
        tree = super().still(root)
        look = "unchanged" if tree is not None else "changed"
        self.walks.append((look, threading.get_ident() == self.loop_thread))
        return tree


async def test_a_rounds_capture_in_a_small_unchanged_project_is_taken_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files written moments ago count as settled (a capture reads them again otherwise).
    monkeypatch.setattr(scan, "RACY_NS", 0)
    root = tmp_path / "project"
    write(root, {"a.py": b"a0\n", "b.py": b"b0\n"})
    rounds = [edit(f"c{n}", **{"a.py": f"a{n}\n"}) for n in range(1, 6)]
    adapter = ScriptedAdapter(*(step for r in rounds for step in (r, [TextDelta("ok")])))
    chat, _view = make_chat(adapter, tools=EchoTool(root))
    manager = WalkNotingCheckpoints(tmp_path / "data", threading.get_ident())
    chat.checkpoints = ChatCheckpoints(chat, manager, Asker())

    async def walks(text: str, busy: bool = False) -> list[tuple[str, bool]]:
        while not manager.idle:  # the last turn's pruning, queued as it ended
            await asyncio.sleep(0.01)
        manager.walks.clear()
        if busy:  # work queued on the worker, finished a moment later
            release = threading.Event()
            manager.run(release.wait, 5)
            asyncio.get_running_loop().call_later(0.05, release.set)
        await turn(chat, text)
        return manager.walks

    worker = ("capture", False)
    # The first capture has nothing to compare with: the worker reads the project. Each
    # round's own capture after it is the worker's too.
    assert await walks("one") == [("changed", True), worker, worker]
    # Nothing changed since the last capture: its check, on the loop, is the capture.
    assert await walks("two") == [("unchanged", True), worker]
    # A file changed by hand: the check sees it, the worker captures (and reads) it.
    write(root, {"b.py": b"b1 by hand\n"})
    assert await walks("three") == [("changed", True), worker, worker]
    # Work queued on the worker goes first: the capture waits behind it.
    assert await walks("four", busy=True) == [worker, worker]
    # A project of more files than a walk on the loop takes goes to the worker.
    monkeypatch.setattr(checkpoints_manager, "AT_ONCE_FILES", 1)
    assert await walks("five") == [("changed", True), worker, worker]
    manager.close()
    records = manager.journals.load("c1", str(root)).records
    before = [r.tree for r in records if r.kind == "tools"]
    after = [r.tree for r in records if r.kind == "tools_done"]
    assert len(before) == len(after) == 5
    # Each capture before a round holds what was there: the last round's writes, the user's.
    assert before[1] == after[0] and before[2] != after[1]

    def content(tree: str, path: str) -> bytes:
        entry = manager.store.entry(tree, path)
        assert entry is not None
        return manager.read(entry.oid)

    assert content(before[2], "b.py") == b"b1 by hand\n"
    assert [content(t, "a.py") for t in before] == [b"a0\n", b"a1\n", b"a2\n", b"a3\n", b"a4\n"]


async def test_whether_a_chat_captures_is_told_without_resolving_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked before and after every tool round: a stat of the folders, not a walk of their paths.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "project").mkdir(parents=True)
    (tmp_path / "elsewhere").symlink_to(tmp_path / "home")
    chat, _view, manager = checkpointed(ScriptedAdapter(), tmp_path, tmp_path / "data")
    checkpoints = chat.checkpoints
    assert checkpoints is not None

    def resolved(*_args: Any, **_kwargs: Any) -> str:
        raise AssertionError("a path was resolved")

    monkeypatch.setattr(os.path, "realpath", resolved)
    for folder, captures in (
        ("home/project", True),
        ("home", False),
        ("elsewhere", False),  # home by another name
        ("missing", True),
    ):
        chat.tools.cwd = tmp_path / folder
        assert checkpoints.capturing is captures, folder
    chat.tools.cwd = Path("/")
    assert not checkpoints.capturing
    manager.close()


async def test_a_rewind_cut_short_after_a_write_leaves_a_record_the_undo_uses(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    write(root, {"a.txt": b"a0\n", "b.txt": b"b0\n"})

    class Failing(Asker):
        async def unsaved(self, paths: list[str]) -> list[str]:
            write(root, {"b.txt": b"saved just before the write\n"})  # the user saves b.txt
            return []

        async def conflict(self, chat_id: str, path: str, mine: Any, checkpoint: Any) -> bool:
            raise RuntimeError("Neovim went away while asking")

    adapter = ScriptedAdapter(edit("c1", **{"a.txt": "a1\n", "b.txt": "b1\n"}), [TextDelta("ok")])
    chat, _view, _manager = checkpointed(adapter, root, tmp_path / "data", Failing())
    await turn(chat, "edit both")
    assert chat.checkpoints is not None
    with pytest.raises(RuntimeError):
        await chat.checkpoints.rewind(1, code=True, conversation=False)
    # a.txt was written before the question about b.txt failed; b.txt was not touched.
    assert (root / "a.txt").read_bytes() == b"a0\n"
    assert (root / "b.txt").read_bytes() == b"saved just before the write\n"
    assert await chat.checkpoints.undo()
    assert (root / "a.txt").read_bytes() == b"a1\n"
    assert (root / "b.txt").read_bytes() == b"saved just before the write\n"
