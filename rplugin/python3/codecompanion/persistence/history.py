"""Saved chats: one JSON file per chat, written atomically after every message."""

from __future__ import annotations

import builtins
import glob
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..messages import MessageStore

log = logging.getLogger("codecompanion.history")

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
STALE_TEMP = 600.0  # seconds after which a save's temp file can only be a leftover


class DamagedChat(Exception):
    """A saved chat that cannot be read: moved aside (never overwritten) and reported."""

    def __init__(self, chat_id: str, reason: str, kept: Path | None) -> None:
        self.chat_id = chat_id
        self.reason = reason
        self.kept = kept
        super().__init__(self.line())

    def line(self) -> str:
        """One line for the user: which chat, why, and where the file is now."""
        where = f"kept as {self.kept}" if self.kept else "left where it is (it could not be moved)"
        return f"saved chat {self.chat_id} is damaged ({self.reason}); {where}, not restored"


def _reason(exc: Exception, size: int) -> str:
    if isinstance(exc, RecursionError):
        return f"it nests deeper than {MAX_DEPTH} levels"
    if isinstance(exc, json.JSONDecodeError):
        if exc.pos >= size - 1 or "Unterminated" in exc.msg:
            return f"it ends early, cut at {size:,} bytes"
        return f"not valid JSON: {exc.msg} at byte {exc.pos:,}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text at byte {exc.start:,}"
    return f"{type(exc).__name__}: {exc}"[:200]


# The fields a saved chat has and the type of each (None allowed where a chat may lack one);
# a nested dict lists its own fields. Fields other modules add are not checked here.
_TEXT = (str, type(None))
_NAMES = ("list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
_PAIRS = (
    "list of [tool, text] pairs",
    lambda v: (
        isinstance(v, list)
        and all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x) for x in v
        )
    ),
)
_SHAPE: dict[str, Any] = {
    "id": _TEXT,
    "title": _TEXT,
    "adapter": _TEXT,
    "model": _TEXT,
    "updated": _TEXT,
    "cwd": _TEXT,
    "messages": (list,),
    "tools": {
        "tools": _NAMES,
        "groups": _NAMES,
        "yolo": (bool,),
        "approvals": {"tools": _NAMES, "commands": _PAIRS},
    },
}


# A saved message: the fields the plugin reads back, each of the type it writes.
_ROLES = ("user", "llm", "system", "tool")
_INT = ("whole number", lambda v: isinstance(v, int) and not isinstance(v, bool))
_OBJECTS = (
    "list of objects",
    lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
)


def _is_call(value: object) -> bool:
    """A stored tool call: `{id, type, function: {name, arguments: text or object}}`."""
    if not isinstance(value, dict) or not isinstance(value.get("id", ""), str):
        return False
    function = value.get("function", {})
    return (
        isinstance(function, dict)
        and isinstance(function.get("name", ""), str)
        and isinstance(function.get("arguments", ""), (str, dict))
        and isinstance(value.get("type", ""), str)
        and _INT[1](value.get("_index", 0))
    )


def _is_image(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(key), str) for key in ("path", "mime", "data")
    )


_MESSAGE: dict[str, Any] = {
    "role": ("role (user, llm, system or tool)", lambda v: v in _ROLES),
    "content": _TEXT,
    "opts": {"visible": (bool,)},
    "_meta": {"id": _INT, "cycle": _INT, "index": _INT, "sent": (bool,), "tag": _TEXT},
    "reasoning": (
        "text or {content: text}",
        lambda v: (
            isinstance(v, (str, type(None)))
            or (isinstance(v, dict) and isinstance(v.get("content"), (str, type(None))))
        ),
    ),
    "tools": {
        "calls": ("list of calls", lambda v: isinstance(v, list) and all(map(_is_call, v))),
        "call_id": _TEXT,
        "name": _TEXT,
        "is_error": (bool,),
        "type": _TEXT,
    },
    "extra": {
        "typed": _TEXT,
        "for_user": _TEXT,
        "changes": _TEXT,
        "incomplete": _TEXT,
        "context": _OBJECTS,
        "images": ("list of images", lambda v: isinstance(v, list) and all(map(_is_image, v))),
        "arguments": (dict,),
        "usage": (dict,),
        "provider_state": (dict,),
        "compacted": _INT,
        "compaction": _INT,
    },
}
# Deeper than this, no saved chat of ours goes (a call's arguments hold the deepest part);
# reading, copying or sending such a document back would exhaust Python's recursion.
MAX_DEPTH = 100


def wrong_field(
    data: dict[str, Any], shape: dict[str, Any] = _SHAPE, prefix: str = "field "
) -> str | None:
    """Why a saved chat cannot be restored as it is (a field of the wrong type), or None."""
    for name, expected in shape.items():
        if name not in data:
            continue
        value = data[name]
        where = f"{prefix}{name}"
        if isinstance(expected, dict):
            if not isinstance(value, dict):
                return f"{where} is {type(value).__name__}, not an object"
            nested = wrong_field(value, expected, f"{where}.")
            if nested is not None:
                return nested
        elif isinstance(expected[0], str):
            if not expected[1](value):
                return f"{where} is not a {expected[0]}"
        elif not isinstance(value, expected):
            wanted = " or ".join("null" if t is type(None) else t.__name__ for t in expected)
            return f"{where} is {type(value).__name__}, not {wanted}"
    return None


def depth(value: object) -> int:
    """How deep lists and objects nest in `value` (0 for a scalar), without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            if deepest > MAX_DEPTH:
                return deepest
            stack += [(child, level + 1) for child in item]
    return deepest


def wrong_saved_chat(data: object) -> str | None:
    """Why `data` (a parsed saved chat) cannot be restored as it is, or None: its fields, each
    message's fields, and how deep it nests."""
    if not isinstance(data, dict) or not isinstance(data.get("messages", []), list):
        return "not a saved chat (no list of messages)"
    if depth(data) > MAX_DEPTH:
        return f"it nests deeper than {MAX_DEPTH} levels"
    wrong = wrong_field(data)
    if wrong is not None:
        return wrong
    for number, message in enumerate(data.get("messages") or [], 1):
        if not isinstance(message, dict):
            kind = type(message).__name__
            return f"a message cannot be read (message {number} is {kind}, not an object)"
        wrong = wrong_field(message, _MESSAGE, f"message {number}'s field ")
        if wrong is not None:
            return f"a message cannot be read ({wrong})"
    return None


# A restored chat: its saved state and messages, or neither and the line saying why.
Restored = tuple["dict[str, Any] | None", "MessageStore | None", "str | None"]


@dataclass(frozen=True)
class SavedChatInfo:
    """What the restore picker shows about one saved chat."""

    id: str
    title: str
    updated: str
    adapter: str | None


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class ChatStore:
    """The folder of saved chats (`stdpath("data")/codecompanion/chats`)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def path_for(self, chat_id: str) -> Path:
        """The file of one chat; ids are checked so they cannot name another folder."""
        if not _SAFE_ID.match(chat_id) or chat_id in (".", ".."):
            raise ValueError(f"invalid chat id {chat_id!r}")
        return self.folder / f"{chat_id}.json"

    def save(self, chat_id: str, state: dict[str, Any], durable: bool = True) -> None:
        """Write the chat atomically: a temp file in the same folder, then rename.

        The rename alone survives a killed process; `durable` also fsyncs (and sweeps old temp
        files), which only a power loss needs: the chat does it when a turn ends.
        """
        target = self.path_for(chat_id)
        # No indent: json's C encoder only runs without one (ten times faster on long chats).
        data = json.dumps(state, ensure_ascii=False).encode("utf-8")
        fd, tmp = self._temp_file(chat_id)
        try:
            try:
                write_all(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if durable:
            self._sweep(chat_id)

    def _temp_file(self, chat_id: str) -> tuple[int, str]:
        """A new private file beside the chat's (the name `_sweep` knows), open for writing;
        the folder is made when it is missing (not asked at every save)."""
        # As tempfile.mkstemp does, without importing tempfile (and shutil, random) for it.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        while True:
            tmp = str(self.folder / f".{chat_id}.{os.urandom(6).hex()}.tmp")
            try:
                return os.open(tmp, flags, 0o600), tmp
            except FileExistsError:
                continue
            except FileNotFoundError:
                self.folder.mkdir(parents=True, exist_ok=True)
                return os.open(tmp, flags, 0o600), tmp

    def _sweep(self, chat_id: str) -> None:
        """Delete the temp files killed saves of this chat left behind."""
        # Only old ones: a temp file another Neovim is still writing is younger than that.
        cutoff = time.time() - STALE_TEMP
        for path in self.folder.glob(f".{glob.escape(chat_id)}.*.tmp"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError as exc:
                log.debug("cannot remove stale temp file %s: %s", path, exc)

    def load(self, chat_id: str) -> dict[str, Any] | None:
        """The saved state of one chat, or None when there is none.

        DamagedChat when the file cannot be read: it is moved aside first, so a new chat saved
        under the same id cannot overwrite what is left of it.
        """
        path = self.path_for(chat_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DamagedChat(chat_id, f"unreadable: {exc.strerror}", None) from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise self.set_aside(chat_id, _reason(exc, len(raw))) from None
        wrong = wrong_saved_chat(data)
        if wrong is not None:
            raise self.set_aside(chat_id, wrong)
        assert isinstance(data, dict)
        return data

    def restore(self, chat_id: str) -> Restored:
        """A saved chat and its messages, or (None, None, the one line saying why not) when it
        cannot be restored as it is: the file is then moved aside and the chat opens empty.
        No shape of file raises here: what the checks let through and the messages still
        refuse is set aside too."""
        from ..messages import MessageStore

        try:
            saved = self.load(chat_id)
            messages = (
                None if saved is None else MessageStore.from_list(saved.get("messages") or [])
            )
        except DamagedChat as exc:
            return None, None, exc.line()
        except Exception as exc:  # a shape nothing above names: still one line, never a raise
            line = self.set_aside(chat_id, f"a message cannot be read: {exc}"[:160]).line()
            return None, None, line
        return saved, messages, None

    def set_aside(self, chat_id: str, reason: str) -> DamagedChat:
        """Move a damaged chat file to `<id>.json.damaged-<time>` and describe it."""
        path = self.path_for(chat_id)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        kept = path.with_name(f"{path.name}.damaged-{stamp}")
        count = 1
        while kept.exists():
            count += 1
            kept = path.with_name(f"{path.name}.damaged-{stamp}-{count}")
        try:
            os.rename(path, kept)
        except OSError as exc:
            log.warning("cannot move damaged chat %s aside: %s", path, exc)
            return DamagedChat(chat_id, reason, None)
        log.warning("saved chat %s is damaged (%s); moved to %s", path, reason, kept)
        return DamagedChat(chat_id, reason, kept)

    def list(self) -> list[SavedChatInfo]:
        """Saved chats, newest first (damaged ones are moved aside, see `scan`)."""
        return self.scan()[0]

    def scan(self) -> tuple[builtins.list[SavedChatInfo], builtins.list[DamagedChat]]:
        """Saved chats, newest first; and the damaged ones found (now moved aside)."""
        if not self.folder.is_dir():
            return [], []
        infos: builtins.list[tuple[float, SavedChatInfo]] = []
        damaged: builtins.list[DamagedChat] = []
        for path in self.folder.glob("*.json"):
            try:
                data = self.load(path.stem)
                mtime = path.stat().st_mtime
            except DamagedChat as exc:
                damaged.append(exc)
                continue
            except (OSError, ValueError):
                continue  # gone meanwhile, or a name that is not a chat id
            if data is None:
                continue
            if not _has_user_message(data):
                continue  # an empty chat (never used, or just cleared) is nothing to restore
            info = SavedChatInfo(
                id=path.stem,
                title=str(data.get("title") or _first_line(data) or path.stem),
                updated=str(data.get("updated") or ""),
                adapter=data.get("adapter"),
            )
            infos.append((mtime, info))
        # Newest last message first (a file's mtime also changes when Neovim quits).
        infos.sort(key=lambda item: (item[1].updated, item[0]), reverse=True)
        return [info for _, info in infos], damaged


def _has_user_message(data: dict[str, Any]) -> bool:
    """Whether a saved chat has a message the user sent (and sees)."""
    return any(
        isinstance(m, dict)
        and m.get("role") == "user"
        and (m.get("opts") or {}).get("visible", True)
        for m in data.get("messages") or []
    )


def _first_line(data: dict[str, Any]) -> str:
    """The first non-empty line the user typed in a saved chat."""
    for message in data.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            extra = message.get("extra") or {}
            text = (
                extra.get("typed")
                if isinstance(extra.get("typed"), str)
                else message.get("content")
            )
            for line in str(text or "").splitlines():
                if line.strip():
                    return line.strip()[:60]
    return ""
