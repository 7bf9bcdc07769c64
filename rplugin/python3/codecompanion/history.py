"""Saved chats: one JSON file per chat, written atomically after every message."""

from __future__ import annotations

import glob
import json
import logging
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("codecompanion.history")

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
STALE_TEMP = 600.0  # seconds after which a save's temp file can only be a leftover


@dataclass(frozen=True)
class SavedChatInfo:
    """What the restore picker shows about one saved chat."""

    id: str
    title: str
    updated: str
    adapter: str | None


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
        self.folder.mkdir(parents=True, exist_ok=True)
        data = json.dumps(state, ensure_ascii=False, indent=1)
        fd, tmp = tempfile.mkstemp(prefix=f".{chat_id}.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if durable:
            self._sweep(chat_id)

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
        """The saved state of one chat, or None when there is none (or it is unreadable)."""
        path = self.path_for(chat_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("cannot read saved chat %s: %s", path, exc)
            return None
        return data if isinstance(data, dict) else None

    def list(self) -> list[SavedChatInfo]:
        """Saved chats, newest first."""
        if not self.folder.is_dir():
            return []
        infos: list[tuple[float, SavedChatInfo]] = []
        for path in self.folder.glob("*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                mtime = path.stat().st_mtime
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict):
                continue
            if not any(
                isinstance(m, dict)
                and m.get("role") == "user"
                and (m.get("opts") or {}).get("visible", True)
                for m in data.get("messages") or []
            ):
                continue  # an empty chat (never used, or just cleared) is nothing to restore
            infos.append(
                (
                    mtime,
                    SavedChatInfo(
                        id=path.stem,
                        title=str(data.get("title") or _first_line(data) or path.stem),
                        updated=str(data.get("updated") or ""),
                        adapter=data.get("adapter"),
                    ),
                )
            )
        # Newest last message first (a file's mtime also changes when Neovim quits).
        infos.sort(key=lambda item: (item[1].updated, item[0]), reverse=True)
        return [info for _, info in infos]


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
