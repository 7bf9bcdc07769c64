"""What the editor sees of a file tool's change: the diff review before it writes (ask the editor,
keep only the accepted hunks), and `User CodeCompanionFileEdited` after it created, edited or
deleted a file."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...diffs import Hunk, apply_hunks, hunks
from ...model.contract import ToolContext


@dataclass(frozen=True)
class Review:
    """What the user let through: the lines to write and the hunks they rejected."""

    lines: list[str]
    total: int
    rejected: tuple[Hunk, ...] = ()
    reason: str | None = None
    reviewed: bool = False  # the user saw it (the file may have changed meanwhile)

    @property
    def nothing_accepted(self) -> bool:
        """True when every hunk was rejected."""
        return self.total > 0 and len(self.rejected) == self.total


async def review(
    ctx: ToolContext, path: str, old: list[str], new: list[str], note: str | None = None
) -> Review:
    """Show old → new to the user when due; the lines with only the accepted hunks applied.

    `note` says why the user is asked again (the file changed during the last review).
    """
    changes = await asyncio.to_thread(hunks, old, new)
    if not changes:
        return Review(list(new), len(changes))
    # The approval gate decides whether the review is due (approved call, YOLO, no editor).
    decision = await ctx.asks.review(path, old, new, note)
    if decision is None:
        return Review(list(new), len(changes))
    accepted = {i for i in decision.accepted if 0 <= i < len(changes)}
    rejected = tuple(h for i, h in enumerate(changes) if i not in accepted)
    lines = apply_hunks(old, new, accepted)
    return Review(lines, len(changes), rejected, decision.reason, reviewed=True)


def describe_hunk(hunk: Hunk) -> str:
    """E.g. `lines 4-6 (-3 +1)`, with 1-based line numbers of the original."""
    first = hunk.old_start + 1
    last = max(hunk.old_end, first)
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"{where} (-{hunk.old_end - hunk.old_start} +{hunk.new_end - hunk.new_start})"


def rejection_note(result: Review) -> str:
    """A sentence for the model about rejected hunks and the user's reason."""
    if not result.rejected:
        return ""
    listed = ", ".join(describe_hunk(h) for h in result.rejected[:10])
    reason = f' Reason: "{result.reason}".' if result.reason else ""
    return (
        f"The user rejected {len(result.rejected)} of {result.total} "
        f"change{'' if result.total == 1 else 's'} ({listed}); "
        f"those were not applied.{reason}"
    )


def first_changed_line(old: Sequence[str], new: Sequence[str]) -> int:
    """The 1-based number of the first line that differs (one past the shorter at the end)."""
    for number, (before, after) in enumerate(zip(old, new, strict=False), 1):
        if before != after:
            return number
    return min(len(old), len(new)) + 1


def file_edited(
    ctx: ToolContext, path: Path, line: int | None = None, on_disk: bool = True
) -> None:
    """Fire the event with CodeCompanion's data: `path`, `tool` and, for an edit, the first
    changed `line` (Lua adds the file's `bufnr` when it is loaded). A change `on_disk` is one
    the round's checks look at (not an edit left unsaved in a buffer)."""
    if on_disk:
        ctx.edited.append(path)
    ctx.events.wrote(path)  # the chat's checkpoints: what its tool left at `path`
    data: dict[str, Any] = {"id": ctx.chat.id, "path": str(path), "tool": ctx.call.name}
    if line is not None:
        data["line"] = line
    ctx.events.fire("FileEdited", data)
