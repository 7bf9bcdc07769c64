"""Who changed what during a tool round, in a real folder: the chat's commands by when they
ran, its file tools by what they wrote, Neovim's saves, another chat's round at the same time."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codecompanion.checkpoints import Checkpoints
from codecompanion.checkpoints.activity import lstat_mark
from codecompanion.checkpoints.journal import Record
from tests.support.checkpoints import write


def round_record(cp: Checkpoints, chat: str, root: Path, start: int) -> Record:
    seen = cp.activity.round(chat, str(root), start)
    return cp.record_after_turns([], chat, root, "tools_done", "chat", round=seen)[-1]


def test_a_command_s_writes_are_the_chat_s_and_writes_outside_its_run_the_user_s(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    write(root, {"a.txt": b"0", "b.txt": b"0"})
    cp = Checkpoints(tmp_path / "data")
    cp.record("c1", root, "tools", "user")
    start = time.time_ns()
    time.sleep(0.1)  # the user answers the approval question, and edits b.txt elsewhere
    write(root, {"b.txt": b"by another editor"})
    time.sleep(0.1)
    cp.activity.started("c1", "call")
    write(root, {"a.txt": b"by the command", "new/made.txt": b"x"})
    cp.activity.ended("c1", "call")
    record = round_record(cp, "c1", root, start)
    assert record.user == ["b.txt"] and record.both == []
    cp.close()


def test_neovim_s_save_during_a_command_is_the_user_s(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"a.txt": b"0", "notes.txt": b"0"})
    cp = Checkpoints(tmp_path / "data")
    cp.record("c1", root, "tools", "user")
    start = time.time_ns()
    cp.activity.started("c1", "call")
    write(root, {"a.txt": b"by the command", "notes.txt": b"saved"})
    mark = lstat_mark(str(root / "notes.txt"))
    assert mark is not None
    cp.activity.saved(str(root / "notes.txt"), mark)
    cp.activity.ended("c1", "call")
    record = round_record(cp, "c1", root, start)
    assert record.user == ["notes.txt"] and record.both == []
    cp.close()


def test_two_chats_running_commands_at_once_cannot_be_told_apart(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"a.txt": b"0", "b.txt": b"0", "c.txt": b"0"})
    cp = Checkpoints(tmp_path / "data")
    cp.record("c1", root, "tools", "user")
    cp.record("c2", root, "tools", "user")
    start = time.time_ns()
    cp.activity.started("c1", "one")
    cp.activity.started("c2", "two")
    write(root, {"a.txt": b"one of them"})
    cp.activity.ended("c2", "two")
    time.sleep(0.1)
    write(root, {"b.txt": b"only c1 ran"})
    # c2's file tool writes c.txt while c1's command runs
    write(root, {"c.txt": b"c2's tool"})
    cp.activity.wrote("c2", str(root / "c.txt"), lstat_mark(str(root / "c.txt")))
    cp.activity.ended("c1", "one")
    record = round_record(cp, "c1", root, start)
    assert record.both == ["a.txt"]
    assert record.user == ["c.txt"]  # b.txt: c1's
    cp.close()


def test_a_file_tool_s_file_is_the_chat_s_unless_changed_after_it(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"a.txt": b"0", "b.txt": b"0"})
    cp = Checkpoints(tmp_path / "data")
    cp.record("c1", root, "tools", "user")
    start = time.time_ns()
    for rel in ("a.txt", "b.txt", "dir/new.txt"):
        write(root, {rel: b"the tool's"})
        cp.activity.wrote("c1", str(root / rel), lstat_mark(str(root / rel)))
    os.remove(root / "a.txt")  # removed after the tool wrote it
    write(root, {"b.txt": b"changed after, no command ran"})
    record = round_record(cp, "c1", root, start)
    assert record.both == ["a.txt", "b.txt"]  # the folder made for its file is the chat's
    assert record.user == []
    cp.close()


def test_a_file_removed_before_the_command_ran_is_the_user_s(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"sub/gone.txt": b"0", "sub/keep.txt": b"0", "cmd.txt": b"0"})
    cp = Checkpoints(tmp_path / "data")
    cp.record("c1", root, "tools", "user")
    start = time.time_ns()
    os.remove(root / "sub" / "gone.txt")  # while the approval question is open
    time.sleep(0.2)
    cp.activity.started("c1", "call")
    os.remove(root / "cmd.txt")  # the command's
    cp.activity.ended("c1", "call")
    record = round_record(cp, "c1", root, start)
    assert record.user == ["sub/gone.txt"] and record.both == []
    cp.close()
