"""One chat's checkpoints in the order they were taken, saved as JSON beside the object store."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from ..persistence.history import write_all

log = logging.getLogger("codecompanion.checkpoints")

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

# What a record marks: "turn" just before a user turn is sent, "tools" just before a tool round
# runs, "tools_done" after it, "rewind"/"undo" just before files are restored, "rewound"/"undone"
# after.
Kind = Literal["turn", "tools", "tools_done", "rewind", "rewound", "undo", "undone"]
# Who changed the files between the previous record and this one.
By = Literal["user", "chat"]


@dataclass
class Record:
    """One checkpoint: the project's tree at a moment of the chat."""

    kind: Kind
    by: By
    tree: str
    time: float
    turn: int
    text: str = ""  # a turn's first line
    message_id: int = -1  # a turn's user message (its id): where the conversation is cut
    cut: bool = False  # a turn the conversation was rewound past (undo brings it back)
    rewind: dict[str, Any] = field(default_factory=dict)  # rewound/undone: what was done
    # A record `by` the chat: of the paths changed since the previous record, those the user
    # changed instead, and those either may have changed (see activity.py).
    user: list[str] = field(default_factory=list)
    both: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON takes it: its fields, not copied (`asdict` deep-copies each one,
        and a journal is written whole after every capture)."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """A record read back; unknown keys are ignored."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


_FIELDS = tuple(f.name for f in fields(Record))


@dataclass
class Journal:
    """A chat's records and the project root they capture."""

    chat_id: str
    root: str
    records: list[Record] = field(default_factory=list)

    def turns(self) -> list[Record]:
        """The live turn records (not cut off by a conversation rewind), oldest first."""
        return [r for r in self.records if r.kind == "turn" and not r.cut]

    def turn(self, number: int) -> int | None:
        """The index in `records` of live turn `number`, or None."""
        for index in range(len(self.records) - 1, -1, -1):
            record = self.records[index]
            if record.kind == "turn" and not record.cut and record.turn == number:
                return index
        return None

    def last_rewind(self) -> int | None:
        """The index of the newest rewind not undone yet, or None."""
        for index in range(len(self.records) - 1, -1, -1):
            record = self.records[index]
            if record.kind == "rewound" and not record.rewind.get("undone"):
                return index
            if record.kind == "turn" and not record.cut:
                return None  # a new turn since: undoing would restore under the chat's feet
        return None


class JournalFolder:
    """`<checkpoints>/chats/<chat id>.json`, one file per chat, written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, chat_id: str) -> Path:
        """The file of one chat's journal."""
        if not _SAFE_ID.match(chat_id) or chat_id in (".", ".."):
            raise ValueError(f"invalid chat id {chat_id!r}")
        return self.folder / f"{chat_id}.json"

    def load(self, chat_id: str, root: str) -> Journal:
        """The chat's journal, or a new one (a journal of another root is not reused)."""
        try:
            data = json.loads(self.path(chat_id).read_text(encoding="utf-8"))
            if data.get("root") == root:
                records = [Record.from_dict(r) for r in data.get("records") or []]
                return Journal(chat_id, root, records)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("checkpoints of chat %s unreadable, starting anew: %s", chat_id, exc)
        return Journal(chat_id, root)

    def save(self, journal: Journal) -> None:
        """Write the journal (temp file, rename); the folder is made when it is missing (one
        write follows every capture: it is not asked each time)."""
        target = self.path(journal.chat_id)
        data = {"root": journal.root, "records": [r.to_dict() for r in journal.records]}
        # ASCII with escapes: a name that is not UTF-8 (held with surrogate escapes) is kept
        # to the byte, where UTF-8 could not encode it.
        encoded = json.dumps(data).encode("ascii")
        tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileNotFoundError:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, flags, 0o666)
        try:
            try:
                write_all(fd, encoded)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def ids(self) -> list[str]:
        """The chat ids with a journal (no file is read)."""
        return [p.stem for p in self.folder.glob("*.json")] if self.folder.is_dir() else []

    def all(self) -> list[tuple[float, str, list[str]]]:
        """Every journal: (time of its last record, chat id, the trees it holds)."""
        found: list[tuple[float, str, list[str]]] = []
        if not self.folder.is_dir():
            return found
        for path in self.folder.glob("*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                records = data.get("records") or []
                trees = [oid for record in records for oid in _held(record)]
                last = max((float(r.get("time") or 0) for r in records), default=0.0)
            except (OSError, ValueError, TypeError, AttributeError):
                continue
            found.append((last, path.stem, [t for t in trees if t]))
        return found

    def remove(self, chat_id: str) -> None:
        """Forget a chat's checkpoints (pruning)."""
        self.path(chat_id).unlink(missing_ok=True)


def _held(record: dict[str, Any]) -> list[str]:
    """The trees and objects a record as saved keeps."""
    rewind = record.get("rewind") or {}
    return [str(record.get("tree") or ""), str(rewind.get("before") or ""), *kept_objects(rewind)]


def kept_objects(rewind: dict[str, Any]) -> list[str]:
    """The objects a rewind's record keeps for its undo: what it replaced and what it wrote."""
    found: list[str] = []
    for key in ("replaced", "wrote"):
        nodes = rewind.get(key)
        if isinstance(nodes, dict):
            for node in nodes.values():
                if isinstance(node, list) and len(node) == 7 and isinstance(node[6], str):
                    found.append(node[6])
    return [oid for oid in found if oid]
