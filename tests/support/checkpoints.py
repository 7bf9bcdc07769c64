"""A project folder driven like a chat would: turns, tool rounds that write, user edits."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from codecompanion.checkpoints import Checkpoints
from codecompanion.checkpoints.rewind import RestorePlan


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

    def rewind(self, turn: int, take_conflicts: bool) -> RestorePlan:
        planned = self.cp.plan(self.chat, self.root, turn)
        assert planned is not None
        turn_record, before, plan = planned
        chosen = [i.path for i in plan.restore]
        if take_conflicts:
            chosen += [i.path for i in plan.conflicts]
        failed = self.cp.restore(self.chat, self.root, plan, chosen, turn_record.tree)
        assert failed == []
        self.cp.record(
            self.chat,
            self.root,
            "rewound",
            "chat",
            turn=turn,
            rewind={"before": before.tree, "written": chosen, "undone": False},
        )
        return plan

    def undo(self, take_conflicts: bool = True) -> RestorePlan:
        planned = self.cp.plan_undo(self.chat, self.root)
        assert planned is not None
        rewound, _before, plan = planned
        chosen = [i.path for i in plan.restore]
        if take_conflicts:
            chosen += [i.path for i in plan.conflicts]
        failed = self.cp.restore(self.chat, self.root, plan, chosen, rewound.rewind["before"])
        assert failed == []
        rewound.rewind["undone"] = True
        self.cp.record(self.chat, self.root, "undone", "chat", turn=rewound.turn)
        return plan


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
    """Everything below `root` by its name as bytes: a folder ("d",), a link ("l", target),
    a file ("f", mode, bytes); `skip` folders are left out. Two equal shapes are the same tree
    to the byte, empty folders, links and modes included."""
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
                found[rel] = ("d",)
            else:
                with open(path, "rb") as handle:
                    found[rel] = ("f", os.stat(path).st_mode & 0o7777, handle.read())
    return found
