"""Hunks of a proposed change, shared by the diff review (editor) and the tools that apply it."""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
from dataclasses import dataclass


@dataclass(frozen=True)
class Hunk:
    """One changed region: old[old_start:old_end] becomes new[new_start:new_end]."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


def hunks(old: list[str], new: list[str]) -> list[Hunk]:
    """The changed regions between two line lists, in order (no context merging)."""
    import difflib

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [Hunk(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def apply_hunks(old: list[str], new: list[str], accepted: set[int]) -> list[str]:
    """`old` with only the accepted hunks (by index into `hunks(old, new)`) applied."""
    result: list[str] = []
    position = 0
    for index, hunk in enumerate(hunks(old, new)):
        result.extend(old[position : hunk.old_start])
        if index in accepted:
            result.extend(new[hunk.new_start : hunk.new_end])
        else:
            result.extend(old[hunk.old_start : hunk.old_end])
        position = hunk.old_end
    result.extend(old[position:])
    return result


def unified(path: str, old: list[str], new: list[str]) -> tuple[str, list[int]]:
    """A unified diff with one `@@` section per hunk, and the 1-based row of each section."""
    lines = [f"--- {path}", f"+++ {path}"]
    rows: list[int] = []
    for hunk in hunks(old, new):
        rows.append(len(lines) + 1)
        lines.append(
            f"@@ -{hunk.old_start + 1},{hunk.old_end - hunk.old_start}"
            f" +{hunk.new_start + 1},{hunk.new_end - hunk.new_start} @@"
        )
        lines += [f"-{line}" for line in old[hunk.old_start : hunk.old_end]]
        lines += [f"+{line}" for line in new[hunk.new_start : hunk.new_end]]
    return "\n".join(lines), rows
