"""Rewind and review in Neovim: the questions a rewind asks, the rewind picker, the review list."""

from __future__ import annotations

import time
from typing import Any

from ..checkpoints import ChatCheckpoints
from ..checkpoints.changes import FileChange, Version, text_lines
from ..tools.diffs import unified
from .bridge import Bridge
from .pickers import pick, pick_index

MODULE = "codecompanion.checkpoints"


class NvimRewindAsker:
    """Asks with vim.ui.select; reads and reloads buffers through `codecompanion.checkpoints`."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    async def conflict(self, chat_id: str, path: str, mine: Version, checkpoint: Version) -> bool:
        """Keep mine / take the checkpoint / show the diff (then asked again)."""
        choices = ["Keep mine", "Take the checkpoint", "Show the diff"]
        while True:
            prompt = f"{path} was changed by you and by the chat since then"
            answer = await pick(self.bridge, prompt, choices)
            if answer != "Show the diff":
                return answer == "Take the checkpoint"
            lines = _difference(path, mine, checkpoint)
            self.bridge.notify_lua("codecompanion.editor", "scratch", "rewind-diff", lines)
            choices = choices[:2]

    async def unsaved(self, paths: list[str]) -> list[str]:
        """The paths loaded in a buffer with unsaved changes."""
        found = await self.bridge.request_lua(MODULE, "modified", paths)
        return [str(p) for p in found] if isinstance(found, list) else []

    async def overwrite_unsaved(self, chat_id: str, path: str) -> bool:
        """Ask before the restored file replaces a buffer's unsaved changes."""
        answer = await pick(
            self.bridge,
            f"{path} has unsaved changes in a buffer",
            ["Keep the buffer (skip this file)", "Discard the buffer's changes and restore"],
        )
        return answer is not None and answer.startswith("Discard")

    async def reload(self, paths: list[str]) -> None:
        """Loaded buffers of `paths` show the files as they are now."""
        if paths:
            await self.bridge.request_lua(MODULE, "reload", paths)


def _label(turn: int, when: float, text: str, files: list[str]) -> str:
    shown = ", ".join(files[:3]) + (f" (+{len(files) - 3})" if len(files) > 3 else "")
    changed = f" — {shown}" if files else " — no files changed since"
    return f"{turn}. {time.strftime('%H:%M', time.localtime(when))}  {text}{changed}"


async def pick_rewind(bridge: Bridge, session: ChatCheckpoints) -> None:
    """`:CodeCompanionChat Rewind`: pick a turn, then what to restore."""
    turns = await session.turns()
    if not turns:
        session.chat.view.notify("no checkpoints in this chat yet", "info")
        return
    newest_first = list(reversed(turns))
    labels = [_label(t.turn, t.time, t.text, t.files) for t in newest_first]
    index = await pick_index(bridge, "Rewind to just before", labels)
    if index is None:
        return
    turn = newest_first[index].turn
    what = await pick(
        bridge, f"Restore to before turn {turn}", ["Code and conversation", "Code", "Conversation"]
    )
    if what is not None:
        await session.rewind(turn, code=what != "Conversation", conversation=what != "Code")


def change_payload(root: str, change: FileChange) -> dict[str, Any]:
    """One file of `changes()`/Review as Lua gets it: counts, hunks and a unified diff."""
    diff, rows = unified(change.path, change.old_lines, change.new_lines)
    hunks = [
        {
            "old_start": h.old_start + 1,
            "old_count": h.old_end - h.old_start,
            "new_start": h.new_start + 1,
            "new_count": h.new_end - h.new_start,
            "row": row,
        }
        for h, row in zip(change.hunks, rows, strict=False)
    ]
    lines = diff.split("\n") if not change.binary else [f"--- {change.path}", "binary file"]
    return {
        "path": change.path,
        "abs": f"{root.rstrip('/')}/{change.path}",
        "status": change.status,
        "added": change.added,
        "removed": change.removed,
        "binary": change.binary,
        "hunks": hunks,
        "diff": lines,
    }


async def changes_payload(session: ChatCheckpoints, since_turn: int | None) -> dict[str, Any]:
    """What `require("codecompanion").changes()` and the review view show."""
    found = await session.changes(since_turn)
    root = str(session.root)
    return {
        "id": session.chat.id,
        "since_turn": since_turn or 1,
        "files": [change_payload(root, c) for c in found],
    }


def _difference(path: str, mine: Version, checkpoint: Version) -> list[str]:
    """The diff view's lines: what each side is when that differs (a folder's mode, a file's
    mode, a link for a file), then the text diff of their bytes."""
    lines: list[str] = []
    if mine.what != checkpoint.what:
        lines.append(f"{path}: yours is {mine.what}, the checkpoint's is {checkpoint.what}")
    if mine.data == checkpoint.data:  # the same bytes, or none (folders)
        return lines
    old, new = text_lines(mine.data), text_lines(checkpoint.data)
    if old is None or new is None:
        return [*lines, f"{path}: binary file, no text diff"]
    return [*lines, *unified(f"{path} (yours → checkpoint)", old, new)[0].split("\n")]


async def show_review(bridge: Bridge, session: ChatCheckpoints, since_turn: int | None) -> None:
    """`:CodeCompanionChat Review`: the files the chat changed since a turn, in a list."""
    payload = await changes_payload(session, since_turn)
    bridge.notify_lua("codecompanion.checkpoints", "show_review", payload)


async def revert(
    bridge: Bridge, session: ChatCheckpoints, since_turn: int | None, path: str, hunk: int | None
) -> None:
    """Revert one file (or one hunk of it) from the review list, then show the list again."""
    await session.revert(since_turn, path, hunk)
    await show_review(bridge, session, since_turn)
