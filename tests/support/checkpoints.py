"""A project folder driven like a chat would: turns, tool rounds that write, user edits."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from codecompanion.checkpoints import Checkpoints, Restored
from codecompanion.checkpoints.activity import lstat_mark
from codecompanion.checkpoints.restore import Restore
from codecompanion.checkpoints.rewind import Progress, RestorePlan


def state(root: Path, skip: tuple[str, ...] = (".git",)) -> dict[str, tuple[int, bytes]]:
    """Every file below `root` (bytes and mode; a link as its target), `skip` folders left out."""
    found: dict[str, tuple[int, bytes]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = (-1, os.fsencode(os.readlink(path)))
            else:
                found[rel] = (path.stat().st_mode & 0o777, path.read_bytes())
    return found


def tree_digest(folder: Path) -> dict[str, str]:
    """Each file below `folder` by its hash (to show a folder untouched)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class Driver:
    """Calls what a chat's turn loop calls, synchronously, against a real folder."""

    def __init__(self, root: Path, data: Path, chat_id: str = "chat1") -> None:
        self.root = root
        self.cp = Checkpoints(data)
        self.chat = chat_id
        self.turn_no = 0

    def turn(self, text: str = "do it") -> None:
        self.turn_no += 1
        self.cp.record(self.chat, self.root, "turn", "user", text=text)

    def tool_round(self, writes: dict[str, bytes | None]) -> None:
        """A tool round (an edit, a command): files written (None: deleted)."""
        self.cp.record(self.chat, self.root, "tools", "user")
        write(self.root, writes)
        self.cp.record(self.chat, self.root, "tools_done", "chat")

    def shell_round(self, line: str) -> None:
        """A command's round: a real shell runs `line` in the project while the call's window
        is open, as the tool runner brackets it."""
        self.cp.record(self.chat, self.root, "tools", "user")
        start = time.time_ns()
        self.cp.activity.started(self.chat, "call")
        subprocess.run(["sh", "-c", line], cwd=self.root, check=True)
        self.cp.activity.ended(self.chat, "call")
        seen = self.cp.activity.round(self.chat, str(self.root), start)
        self.cp.record_after_turns([], self.chat, self.root, "tools_done", "chat", round=seen)

    def command_round(
        self,
        chat: dict[str, Put],
        saves: dict[str, Put] | None = None,
        between: Callable[[], object] | None = None,
    ) -> None:
        """A command's round: what it writes is seen by when it ran; Neovim's saves meanwhile
        (`saves`, after `between`) are told to the checkpoints, as Lua does."""
        self.cp.record(self.chat, self.root, "tools", "user")
        start = time.time_ns()
        self.cp.activity.started(self.chat, "call")
        put_all(self.root, chat)
        if between is not None:
            between()
        for rel, value in (saves or {}).items():
            put(self.root, rel, value)
            mark = lstat_mark(os.path.join(self.root, rel))
            if mark is not None:
                self.cp.activity.saved(os.path.join(self.root, rel), mark)
        self.cp.activity.ended(self.chat, "call")
        seen = self.cp.activity.round(self.chat, str(self.root), start)
        self.cp.record_after_turns([], self.chat, self.root, "tools_done", "chat", round=seen)

    def file_tool_round(self, chat: dict[str, Put]) -> None:
        """A round of file tools: each tells what it wrote."""
        self.cp.record(self.chat, self.root, "tools", "user")
        start = time.time_ns()
        for rel, value in chat.items():
            put(self.root, rel, value)
            path = os.path.join(self.root, rel)
            self.cp.activity.wrote(self.chat, path, lstat_mark(path))
        seen = self.cp.activity.round(self.chat, str(self.root), start)
        self.cp.record_after_turns([], self.chat, self.root, "tools_done", "chat", round=seen)

    def rewind_asking(self, turn: int, ask: Callable[[Restore], bool]) -> Restored:
        """A rewind as the chat runs it: each conflict asked (`ask` may change files meanwhile),
        written in batches, a path that moved since asked again."""
        planned = self.cp.plan(self.chat, self.root, turn)
        assert planned is not None
        _turn_record, before, plan = planned
        return self._batches(plan, ask, Progress("rewound", turn, {"before": before.tree}))

    def undo_asking(self, ask: Callable[[Restore], bool]) -> Restored:
        """The undo of the newest rewind, asking as the chat does."""
        planned = self.cp.plan_undo(self.chat, self.root)
        assert planned is not None
        rewound, _before, plan = planned
        done = self._batches(plan, ask, Progress("undone", rewound.turn, {}))
        rewound.rewind["undone"] = True
        return done

    def _batches(
        self, plan: RestorePlan, ask: Callable[[Restore], bool], progress: Progress
    ) -> Restored:
        done = Restored(unrestorable=list(plan.unrestorable), failed=list(plan.refused))
        items = list(plan.restore) + [item for item in plan.conflicts if ask(item)]
        while True:
            outcome = self.cp.restore(self.chat, self.root, items, progress)
            done.written += outcome.done
            done.failed += outcome.failed
            done.kept += outcome.kept
            items = [item for item in outcome.moved if ask(item)]
            if not items:
                return done

    def rewind(self, turn: int, take_conflicts: bool) -> RestorePlan:
        planned = self.cp.plan(self.chat, self.root, turn)
        assert planned is not None
        _turn_record, before, plan = planned
        items = list(plan.restore) + (list(plan.conflicts) if take_conflicts else [])
        data = {"target": turn, "before": before.tree, "undone": False}
        outcome = self.cp.restore(self.chat, self.root, items, Progress("rewound", turn, data))
        assert outcome.failed == [] and outcome.moved == []
        return plan

    def undo(self, take_conflicts: bool = True) -> RestorePlan:
        planned = self.cp.plan_undo(self.chat, self.root)
        assert planned is not None
        rewound, _before, plan = planned
        items = list(plan.restore) + (list(plan.conflicts) if take_conflicts else [])
        progress = Progress("undone", rewound.turn, {"undo_of": rewound.turn})
        outcome = self.cp.restore(self.chat, self.root, items, progress)
        assert outcome.failed == [] and outcome.moved == []
        rewound.rewind["undone"] = True
        return plan


# What a step leaves at a path: bytes (a file), None (nothing), ("link", target), ("dir",),
# or ("mode", bits) for the file or folder that is there.
Put = bytes | tuple[str, ...] | tuple[str, int] | None


def put(root: Path, rel: str, value: Put) -> None:
    """Leave `value` at `rel` below `root`, whatever was there (a file, a link, a folder) and
    whatever stood on the way (a file or link where a folder is needed goes)."""
    path = os.path.join(root, rel)
    parent = os.path.dirname(path)
    if value is None and not os.path.lexists(path):
        return  # nothing to remove (and no folder made for it)
    for step in _steps(root, parent):
        if os.path.lexists(step) and not os.path.isdir(step) or os.path.islink(step):
            os.unlink(step)
        if not os.path.lexists(step):
            os.mkdir(step)
    if isinstance(value, tuple) and value[0] == "mode":
        if not os.path.islink(path) and os.path.lexists(path):
            os.chmod(path, int(value[1]))
        return
    _clear(path)
    if isinstance(value, bytes):
        with open(path, "wb") as handle:
            handle.write(value)
    elif isinstance(value, tuple) and value[0] == "link":
        os.symlink(str(value[1]), path)
    elif isinstance(value, tuple) and value[0] == "dir":
        os.mkdir(path)


def put_all(root: Path, values: dict[str, Put]) -> None:
    """`put` each value in turn."""
    for rel, value in values.items():
        put(root, rel, value)


def _steps(root: Path, folder: str) -> list[str]:
    rel = os.path.relpath(folder, root)
    if rel == ".":
        return []
    parts = rel.split(os.sep)
    return [os.path.join(root, *parts[: n + 1]) for n in range(len(parts))]


def _clear(path: str) -> None:
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def write(root: Path, writes: dict[str, bytes | None]) -> None:
    """Write (or delete, for None) files below `root`, making folders as needed."""
    for rel, data in writes.items():
        path = root / rel
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


Shape = dict[bytes, tuple[object, ...]]


def shape(root: Path, skip: tuple[bytes, ...] = (b".git",)) -> Shape:
    """Everything below `root` by its name as bytes: a folder ("d", mode), a link ("l",
    target), a file ("f", mode, bytes); `skip` folders are left out. Two equal shapes are the
    same tree to the byte, empty folders, links and modes (of folders too) included."""
    found: Shape = {}
    base = os.fsencode(root)
    for folder, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in [*dirs, *names]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                found[rel] = ("l", os.readlink(path))
            elif os.path.isdir(path):
                found[rel] = ("d", os.lstat(path).st_mode & 0o7777)
            else:
                with open(path, "rb") as handle:
                    found[rel] = ("f", os.stat(path).st_mode & 0o7777, handle.read())
    return found
