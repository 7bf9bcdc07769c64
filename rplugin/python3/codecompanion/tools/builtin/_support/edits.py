"""Edits as the model sends them: parsing `edits`, and applying them in order, all or nothing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .edit_match import EditError, Match, Text, block_lines, locate
from .edit_shape import Shaped, shape

_KEYS = "oldText, newText and replaceAll"


@dataclass(frozen=True)
class Edit:
    """Replace `old_text` with `new_text` (every occurrence with `replace_all`)."""

    old_text: str
    new_text: str
    replace_all: bool = False


@dataclass(frozen=True)
class Applied:
    """How one edit was placed: the matcher used and the 1-based lines it changed."""

    index: int
    strategy: str
    lines: tuple[int, ...]
    score: float
    notes: tuple[str, ...] = ()  # what differed and how newText was fitted, for the model

    def describe(self) -> str:
        """E.g. `edit 1: exact match at line 12` or `... 3 places (lines 4, 9, 20)`, and notes."""
        where = (
            f"line {self.lines[0]}"
            if len(self.lines) == 1
            else f"{len(self.lines)} places (lines {', '.join(map(str, self.lines[:10]))})"
        )
        similar = self.strategy in ("fuzzy", "punctuation-normalised")
        how = f"{self.strategy} match" + (f" ({self.score:.0%} similar)" if similar else "")
        return f"edit {self.index + 1}: {how} at {where}" + "".join(f"; {n}" for n in self.notes)


@dataclass(frozen=True)
class EditedText:
    """The content after every edit, and how each was placed."""

    content: str
    applied: tuple[Applied, ...]


def _decode(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        import json_repair  # loaded when a model first sends broken JSON

        try:
            repaired = json_repair.repair_json(raw, return_objects=True)
        except Exception:  # the repair library is best effort; failing means "not JSON"
            repaired = None
        if isinstance(repaired, (list, dict)) and repaired:
            return repaired
        raise EditError(
            f"`edits` is not valid JSON; send a list of objects with {_KEYS}."
        ) from None


def _edit(index: int, item: Any, need_old: bool) -> Edit:
    if not isinstance(item, dict):
        raise EditError(f"edits[{index}] must be an object with {_KEYS}.")
    old, new, replace_all = item.get("oldText"), item.get("newText"), item.get("replaceAll")
    if old is None and not need_old:
        old = ""
    if not isinstance(old, str):
        raise EditError(f"edits[{index}].oldText is missing or not a string.")
    if not isinstance(new, str):
        raise EditError(f"edits[{index}].newText is missing or not a string.")
    if replace_all is not None and not isinstance(replace_all, bool):
        raise EditError(f"edits[{index}].replaceAll must be true, false or null.")
    return Edit(old.replace("\r\n", "\n"), new.replace("\r\n", "\n"), bool(replace_all))


def parse_edits(raw: Any, need_old: bool = True) -> list[Edit]:
    """The `edits` argument as Edit values; a JSON string (even a broken one) is decoded first.

    `need_old` False lets oldText be missing (for the append and overwrite modes).
    """
    value = _decode(raw)
    if isinstance(value, str):
        value = _decode(value)  # JSON text encoded twice
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        raise EditError(f"`edits` must be a non-empty list of objects with {_KEYS}.")
    return [_edit(i, item, need_old) for i, item in enumerate(value)]


def _replacement(edit: Edit, match: Match, content: str) -> Shaped:
    """The text that replaces a match, shaped like the matched lines when they were whole lines."""
    if not match.whole_lines:
        return Shaped([edit.new_text])
    old_lines, lead, trail = block_lines(edit.old_text)
    new_lines = edit.new_text.split("\n")
    for _ in range(lead):
        if len(new_lines) > 1 and not new_lines[0].strip():
            new_lines.pop(0)
    for _ in range(trail):
        if new_lines and not new_lines[-1].strip():
            new_lines.pop()
    found = content[match.start : match.end].split("\n")
    return shape(new_lines, old_lines, found, match.strategy, match.line, content)


def _splice(content: str, match: Match, replacement: str) -> str:
    start, end = match.start, match.end
    if match.whole_lines and replacement == "":
        # Deleting whole lines also removes their line break.
        if end < len(content) and content[end] == "\n":
            end += 1
        elif start > 0 and content[start - 1] == "\n":
            start -= 1
    return content[:start] + replacement + content[end:]


# oldText markers (CodeCompanion's convention) for inserting at the file's start or end.
START_MARKERS = ("^", "<<START>>")
END_MARKERS = ("$", "<<END>>")


def apply_edit(content: str, edit: Edit, index: int = 0) -> tuple[str, Applied]:
    """`content` with one edit applied."""
    if edit.old_text == edit.new_text:
        raise EditError("oldText and newText are the same, so this edit changes nothing.")
    if not edit.old_text.strip("\n") and not content.strip():
        return edit.new_text, Applied(index, "empty file", (1,), 1.0)
    marker = edit.old_text.strip()
    if marker in START_MARKERS:
        return edit.new_text + content, Applied(index, "start of file", (1,), 1.0)
    if marker in END_MARKERS:
        last = content.count("\n") + 1
        return content + edit.new_text, Applied(index, "end of file", (last,), 1.0)
    if not edit.old_text:
        raise EditError(
            'oldText is empty. Quote the text to replace, use "^" / "$" as oldText to insert '
            'at the start / end of the file, or mode "overwrite" to replace all of it.'
        )
    matches = locate(Text(content), edit.old_text, edit.replace_all)
    notes: dict[str, None] = {}
    for match in sorted(matches, key=lambda m: m.start, reverse=True):
        shaped = _replacement(edit, match, content)
        notes.update(dict.fromkeys(shaped.notes))
        content = _splice(content, match, "\n".join(shaped.lines))
    lines = tuple(m.line for m in matches)
    score = min(m.score for m in matches)
    return content, Applied(index, matches[0].strategy, lines, score, tuple(notes))


def apply_edits(content: str, edits: Sequence[Edit]) -> EditedText:
    """Apply `edits` in order to `content`; any failure raises EditError and changes nothing."""
    applied: list[Applied] = []
    for index, edit in enumerate(edits):
        try:
            content, placed = apply_edit(content, edit, index)
        except EditError as exc:
            prefix = f"Edit {index + 1} of {len(edits)}: " if len(edits) > 1 else ""
            raise EditError(f"{prefix}{exc}") from None
        applied.append(placed)
    return EditedText(content, tuple(applied))
