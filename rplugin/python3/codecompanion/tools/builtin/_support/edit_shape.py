"""Fitting an edit's newText into the lines a loose match found, and saying how.

When `oldText` matched only after normalising (indentation, spacing, punctuation), newText may
be written in oldText's indentation (then it is re-indented to the file's), in the file's
indentation steps but at oldText's depth (then it is shifted), or already exactly as the file
indents (then it is kept as written). Lines newText copies unchanged from oldText keep the
file's own text, so a comma the model left out of its quote is not dropped from the file.
Each decision becomes a note for the model.
"""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

_SHOWN_DIFFERENCES = 3
_QUOTE = 60
_STEP_SCAN = 5000  # lines of the file looked at to learn its indentation step
# Strategies whose matched lines may differ from oldText's, so newText is fitted to them.
LOOSE = frozenset(
    {"whitespace-normalised", "indentation-insensitive", "punctuation-normalised", "fuzzy"}
)
_REINDENTED = frozenset({"indentation-insensitive", "punctuation-normalised", "fuzzy"})
_WAYS = ("re-indented", "shifted", "as written")  # preferred in this order when undecided
_NOTES = {
    "re-indented": "newText was re-indented from oldText's indentation to the file's",
    "shifted": "newText was shifted to the depth of the matched lines (its indentation steps "
    "already are the file's)",
    "as written": "newText was kept as written: it already uses the file's indentation",
}


@dataclass(frozen=True)
class Shaped:
    """The replacement lines and what was done to fit them, for the model."""

    lines: list[str]
    notes: tuple[str, ...] = ()


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def indent_map(old_lines: list[str], found: list[str]) -> dict[str, str]:
    """The model's indentation → the file's, from line pairs of a whole-line match."""
    mapping: dict[str, str] = {}
    for old, line in zip(old_lines, found, strict=False):
        if old.strip() and line.strip():
            mapping.setdefault(_indent(old), _indent(line))
    return mapping


def step(lines: Iterable[str]) -> str | None:
    """The most common indentation step between consecutive non-blank lines (None: flat)."""
    steps: Counter[str] = Counter()
    previous: str | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = _indent(line)
        if previous is not None and len(indent) > len(previous) and indent.startswith(previous):
            steps[indent[len(previous) :]] += 1
        previous = indent
    return steps.most_common(1)[0][0] if steps else None


@dataclass(frozen=True)
class _Fit:
    """The ways newText's indentation can relate to the file's."""

    mapping: dict[str, str]
    ours: str  # oldText's first indentation
    theirs: str  # the matched lines' first indentation
    model_step: str | None  # oldText's own step (None: oldText is flat)
    file_step: str | None
    new_step: str | None

    def reindent(self, indent: str) -> str:
        """oldText's indentation → the file's; deeper levels take the file's step when known."""
        keys = sorted(self.mapping, key=len, reverse=True)
        key = next((k for k in keys if indent.startswith(k)), None)
        if key is None:
            return indent
        extra = indent[len(key) :]
        model, file = self.model_step or self.new_step, self.file_step
        if extra and model and file and extra == model * (len(extra) // len(model)):
            extra = file * (len(extra) // len(model))
        return self.mapping[key] + extra

    def shift(self, indent: str) -> str:
        """The file's steps at oldText's depth → moved to the matched lines' depth."""
        if not indent.startswith(self.ours):
            return indent
        return self.theirs + indent[len(self.ours) :]

    def apply(self, how: str, lines: list[str]) -> list[str]:
        """`lines` with every indentation changed as `how` says."""
        if how == "as written":
            return list(lines)
        change = self.reindent if how == "re-indented" else self.shift
        return [change(_indent(line)) + line.lstrip() if line.strip() else line for line in lines]

    def lands(self, how: str, new: str, found: str) -> bool:
        """Whether `new`, changed as `how` says, has `found`'s indentation."""
        return _indent(self.apply(how, [new])[0]) == _indent(found)


def _pairs(old_lines: list[str], new_lines: list[str]) -> list[tuple[int, int]]:
    """(old, new) index pairs of non-blank lines newText copies from oldText (any indentation)."""
    old = [line.strip() for line in old_lines]
    new = [line.strip() for line in new_lines]
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return [
        (block.a + k, block.b + k)
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
        if old[block.a + k]
    ]


def _choose(fit: _Fit, new_lines: list[str], old_lines: list[str], found: list[str]) -> str:
    """How newText's indentation relates to the file's: re-indented, shifted or as written.

    Lines newText copies from oldText decide (their indentation must land on the file's), then
    newText's first line against the first matched line, then whose indentation step newText
    uses. Still undecided means oldText's: the model usually writes in its own style.
    """
    copied = [(i, j) for i, j in _pairs(old_lines, new_lines) if i < len(found)]
    first = next((j for j, line in enumerate(new_lines) if line.strip()), None)
    ways = list(_WAYS)
    for group in (copied, [(0, first)] if first is not None else []):
        ways = _landing_best(fit, ways, group, new_lines, found)
    if len({tuple(fit.apply(w, new_lines)) for w in ways}) > 1:
        ways = _by_step(fit, ways)
    return ways[0]


def _landing_best(
    fit: _Fit, ways: list[str], group: list[tuple[int, int]], new_lines: list[str], found: list[str]
) -> list[str]:
    """The ways under which most of `group`'s (oldText line, newText line) pairs land right."""
    if not group:
        return ways
    scores = {w: sum(fit.lands(w, new_lines[j], found[i]) for i, j in group) for w in ways}
    return [w for w in ways if scores[w] == max(scores.values())]


def _by_step(fit: _Fit, ways: list[str]) -> list[str]:
    """Between ways that still differ: newText's own indentation step tells whose style it is."""
    own = fit.new_step
    if own is not None and own == fit.file_step != fit.model_step:
        return [w for w in ways if w != "re-indented"] or ways
    if own is not None and own == fit.model_step != fit.file_step and "re-indented" in ways:
        return ["re-indented"]
    return ways


def _keep_file_lines(
    lines: list[str], new_lines: list[str], old_lines: list[str], found: list[str]
) -> tuple[list[str], int]:
    """`lines` where newText copies an oldText line the file writes differently: the file's text."""
    out = list(lines)
    kept = 0
    for i, j in _pairs(old_lines, new_lines):
        if i >= len(found) or not found[i].strip() or found[i].strip() == old_lines[i].strip():
            continue
        out[j] = _indent(out[j]) + found[i].lstrip()
        kept += 1
    return out, kept


def _differences(old_lines: list[str], found: list[str], first_line: int) -> str:
    rows = [
        (first_line + i, line.strip(), old.strip())
        for i, (old, line) in enumerate(zip(old_lines, found, strict=False))
        if old.strip() != line.strip()
    ]
    shown = "; ".join(
        f"line {n}: the file has `{have[:_QUOTE]}` where oldText has `{want[:_QUOTE]}`"
        for n, have, want in rows[:_SHOWN_DIFFERENCES]
    )
    more = f"; and {len(rows) - _SHOWN_DIFFERENCES} more" if len(rows) > _SHOWN_DIFFERENCES else ""
    return f"oldText differed from the file only in punctuation or spacing ({shown}{more})"


def shape(
    new_lines: list[str],
    old_lines: list[str],
    found: list[str],
    strategy: str,
    first_line: int,
    content: str = "",
) -> Shaped:
    """newText's lines fitted to the `found` lines (from line `first_line` of `content`)."""
    if strategy not in LOOSE:
        return Shaped(new_lines)
    notes: list[str] = []
    if strategy == "punctuation-normalised":
        notes.append(_differences(old_lines, found, first_line))
    lines = new_lines
    mapping = indent_map(old_lines, found)
    if strategy in _REINDENTED and any(k != v for k, v in mapping.items()):
        file_step = step(content.split("\n", _STEP_SCAN)[:_STEP_SCAN]) or step(found)
        ours, theirs = _indent(old_lines[0]), _indent(found[0])
        fit = _Fit(mapping, ours, theirs, step(old_lines), file_step, step(new_lines))
        how = _choose(fit, new_lines, old_lines, found)
        lines = fit.apply(how, new_lines)
        notes.append(_NOTES["as written" if lines == new_lines else how])
    lines, kept = _keep_file_lines(lines, new_lines, old_lines, found)
    if kept:
        plural = "s" if kept > 1 else ""
        notes.append(f"{kept} line{plural} newText copied from oldText kept the file's text")
    return Shaped(lines, tuple(notes))
