"""Finding where an edit's `oldText` is in a file: a chain of ever looser matchers.

exact → line-trimmed → whitespace-normalised → indentation-insensitive →
punctuation-normalised → fuzzy. The first stage that finds anything decides; more than one
place is an error (never a silent first match), and nothing found is an error quoting the
closest text.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from ....errors import ToolError

PUNCT_MIN = 0.9  # a match differing only in punctuation must be at least this similar
FUZZY_MIN = 0.92  # lowest similarity a fuzzy match may have
FUZZY_MARGIN = 0.05  # the winner must beat any other place by this much
FUZZY_MIN_CHARS = 20  # shorter oldText is never matched fuzzily
ANCHOR_CUTOFF = 70.0  # an anchor line must be this similar (0-100) to pick a window
LINE_CUTOFF = 70.0  # in a fuzzy match every line must be at least this similar (0-100)
MAX_CANDIDATES = 4000
_MAX_LISTED = 12
_QUOTE_LINES = 12
_QUOTE_WIDTH = 160
_PUNCT_SPACE = re.compile(r"\s*([()\[\]{},;:])\s*")
_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[,;]+$")


class EditError(ToolError):
    """An edit could not be placed; the message tells the model why and what to do."""


@dataclass(frozen=True)
class Match:
    """One place `oldText` was found: characters [start, end) of the content."""

    start: int
    end: int
    line: int  # 1-based line of `start`
    strategy: str
    score: float = 1.0
    whole_lines: bool = False


def squash(line: str) -> str:
    """A line with whitespace runs collapsed and spaces around brackets and commas removed."""
    return _PUNCT_SPACE.sub(r"\1", _SPACES.sub(" ", line.strip()))


def unpunctuate(line: str) -> str:
    """`squash`ed, without trailing commas and semicolons (a line's punctuation-free form)."""
    return _TRAILING.sub("", squash(line))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _squeeze(line: str) -> str:
    return "".join(line.split())


class Text:
    """A content string split into lines, with the per-line forms the matchers compare."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.lines = content.split("\n")
        lengths = (len(line) + 1 for line in self.lines)
        self.offsets = [0, *itertools.accumulate(lengths)][: len(self.lines)]

    def line_of(self, offset: int) -> int:
        """The 1-based line number holding character `offset`."""
        return bisect.bisect_right(self.offsets, offset)

    def span(self, first: int, count: int) -> tuple[int, int]:
        """Character span of `count` whole lines from 0-based line `first` (no final newline)."""
        last = first + count - 1
        return self.offsets[first], self.offsets[last] + len(self.lines[last])

    @cached_property
    def rstripped(self) -> list[str]:
        """Lines without trailing whitespace."""
        return [line.rstrip() for line in self.lines]

    @cached_property
    def stripped(self) -> list[str]:
        """Lines without surrounding whitespace."""
        return [line.strip() for line in self.lines]

    @cached_property
    def unpunctuated(self) -> list[str]:
        """`squeezed` lines without trailing commas and semicolons (a cheap prefilter)."""
        return [line.rstrip(",;") for line in self.squeezed]

    @cached_property
    def squeezed(self) -> list[str]:
        """Lines with all whitespace removed (a cheap prefilter for the normalised matchers)."""
        return [_squeeze(line) for line in self.lines]


def block_lines(text: str) -> tuple[list[str], int, int]:
    """`text` as lines without leading/trailing blank lines, and how many were dropped each side."""
    lines = text.split("\n")
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    trail = next((i for i, line in enumerate(reversed(lines)) if line.strip()), 0)
    return lines[lead : len(lines) - trail], lead, trail


def _exact(text: Text, old: str, replace_all: bool) -> list[Match]:
    matches: list[Match] = []
    start = text.content.find(old)
    while start != -1:
        matches.append(Match(start, start + len(old), text.line_of(start), "exact"))
        if not replace_all and len(matches) > 1:
            break
        start = text.content.find(old, start + (len(old) if replace_all else 1))
    return matches


def _line_stage(
    name: str,
    forms: Callable[[Text], list[str]],
    normalise: Callable[[str], str],
    verify: Callable[[str, str], bool] | None = None,
) -> Callable[[Text, list[str], bool], list[Match]]:
    """A whole-line matcher: lines are equal once both sides are normalised."""

    def stage(text: Text, old_lines: list[str], replace_all: bool) -> list[Match]:
        wanted = [normalise(line) for line in old_lines]
        content_forms = forms(text)
        count = len(wanted)
        matches: list[Match] = []
        next_free = 0
        for first in range(len(text.lines) - count + 1):
            if content_forms[first] != wanted[0] or first < next_free:
                continue
            window = range(first, first + count)
            if any(content_forms[i] != w for i, w in zip(window, wanted, strict=True)):
                continue
            if verify and not all(
                verify(text.lines[i], o) for i, o in zip(window, old_lines, strict=True)
            ):
                continue
            start, end = text.span(first, count)
            matches.append(Match(start, end, first + 1, name, 1.0, True))
            if replace_all:
                next_free = first + count
        return matches

    return stage


def _same_normalised(line: str, old: str) -> bool:
    return _indent(line) == _indent(old) and squash(line) == squash(old)


def _same_ignoring_indent(line: str, old: str) -> bool:
    return squash(line) == squash(old)


def _same_unpunctuated(line: str, old: str) -> bool:
    return unpunctuate(line) == unpunctuate(old)


_unpunctuated_lines = _line_stage(
    "punctuation-normalised",
    lambda t: t.unpunctuated,
    lambda line: _squeeze(line).rstrip(",;"),
    _same_unpunctuated,
)


def _punctuation_normalised(text: Text, old_lines: list[str], replace_all: bool) -> list[Match]:
    """Lines equal but for punctuation and spacing, scored; too dissimilar places are dropped."""
    from rapidfuzz import fuzz  # loaded on the first fuzzy match: a chat without edits skips it

    wanted = "\n".join(line.strip() for line in old_lines)
    count = len(old_lines)
    matches = []
    for match in _unpunctuated_lines(text, old_lines, replace_all):
        found = "\n".join(text.stripped[match.line - 1 : match.line - 1 + count])
        score = fuzz.ratio(wanted, found) / 100
        if score >= PUNCT_MIN:
            matches.append(dataclasses.replace(match, score=score))
    return matches


_LINE_STAGES = (
    _line_stage("line-trimmed", lambda t: t.rstripped, str.rstrip),
    _line_stage("whitespace-normalised", lambda t: t.squeezed, _squeeze, _same_normalised),
    _line_stage("indentation-insensitive", lambda t: t.squeezed, _squeeze, _same_ignoring_indent),
    _punctuation_normalised,
)


@dataclass(frozen=True)
class _Scored:
    first: int
    score: float


def _fuzzy_candidates(text: Text, old_lines: list[str]) -> list[_Scored]:
    """Windows of len(old_lines) lines picked by anchor lines, scored by similarity (0-1)."""
    from rapidfuzz import fuzz
    from rapidfuzz import process as rf_process

    count = len(old_lines)
    wanted = [line.strip() for line in old_lines]
    limit = len(text.lines) - count
    if limit < 0:
        return []
    anchors = sorted(range(count), key=lambda i: (-len(wanted[i]), i))[:2]
    starts: dict[int, float] = {}
    for offset in anchors:
        found = rf_process.extract(
            wanted[offset], text.stripped, scorer=fuzz.ratio, score_cutoff=ANCHOR_CUTOFF, limit=None
        )
        for _choice, score, index in found:
            first = int(index) - offset
            if 0 <= first <= limit:
                starts[first] = max(starts.get(first, 0.0), float(score))
    chosen = sorted(starts, key=lambda s: (-starts[s], s))[:MAX_CANDIDATES]
    joined = "\n".join(wanted)
    windows = ["\n".join(text.stripped[s : s + count]) for s in chosen]
    scored = rf_process.extract(joined, windows, scorer=fuzz.ratio, limit=None)
    return [_Scored(chosen[int(i)], float(score) / 100) for _w, score, i in scored]


def _lines_agree(wanted: list[str], found: list[str]) -> bool:
    """Every line pair is blank on both sides or roughly alike (no invented or missing lines)."""
    from rapidfuzz import fuzz

    for want, got in zip(wanted, found, strict=True):
        if not want or not got:
            if want or got:
                return False
        elif fuzz.ratio(want, got) < LINE_CUTOFF:
            return False
    return True


def _fuzzy(text: Text, old_lines: list[str]) -> tuple[list[Match], list[_Scored]]:
    """The one clear fuzzy winner (or several close ones), and all scored windows."""
    if sum(len(line.strip()) for line in old_lines) < FUZZY_MIN_CHARS:
        return [], []
    scored = _fuzzy_candidates(text, old_lines)
    count = len(old_lines)
    wanted = [line.strip() for line in old_lines]
    close = [
        s
        for s in scored
        if s.score >= FUZZY_MIN - FUZZY_MARGIN
        and _lines_agree(wanted, text.stripped[s.first : s.first + count])
    ]
    if not close or close[0].score < FUZZY_MIN:
        return [], scored
    best = close[0]
    rivals = [
        s
        for s in close[1:]
        if abs(s.first - best.first) >= count and s.score > best.score - FUZZY_MARGIN
    ]
    matches = []
    for item in [best, *rivals]:
        start, end = text.span(item.first, count)
        matches.append(Match(start, end, item.first + 1, "fuzzy", item.score, True))
    return matches, scored


def _quote(text: Text, first: int, count: int) -> str:
    shown = text.lines[first : first + min(count, _QUOTE_LINES)]
    rows = [f"{first + 1 + i}: {line[:_QUOTE_WIDTH]}" for i, line in enumerate(shown)]
    if count > _QUOTE_LINES:
        rows.append(f"... ({count - _QUOTE_LINES} more lines)")
    return "\n".join(rows)


def _closest(text: Text, old_lines: list[str], scored: list[_Scored]) -> str:
    """A quote of the text most like `old_lines`, with line numbers."""
    from rapidfuzz import fuzz
    from rapidfuzz import process as rf_process

    count = max(len(old_lines), 1)
    if scored:
        best = scored[0]
        note = f"similarity {best.score:.0%}"
        return f"Closest text ({note}), lines {best.first + 1}-{best.first + count}:\n" + _quote(
            text, best.first, count
        )
    wanted = max((line.strip() for line in old_lines), key=len, default="")
    found = rf_process.extractOne(wanted, text.stripped, scorer=fuzz.ratio) if wanted else None
    if not found or not any(text.stripped):
        return "The file has no similar text."
    first = int(found[2])
    return f"Closest line ({float(found[1]) / 100:.0%} similar):\n" + _quote(text, first, 1)


def _ambiguous(matches: Sequence[Match]) -> EditError:
    ordered = sorted(matches, key=lambda m: m.line)
    lines = ", ".join(str(m.line) for m in ordered[:_MAX_LISTED])
    more = f" and {len(matches) - _MAX_LISTED} more" if len(matches) > _MAX_LISTED else ""
    return EditError(
        f"oldText matches {len(matches)} places ({matches[0].strategy} match), starting at "
        f"lines {lines}{more}. Include more surrounding lines so it matches exactly one place, "
        "or set replaceAll to change every occurrence."
    )


def locate(content: str | Text, old: str, replace_all: bool = False) -> list[Match]:
    """Where `old` is in `content`: one match, or every match with `replace_all`.

    Raises EditError when it is found nowhere (quoting the closest text) or, without
    `replace_all`, in more than one place (listing their lines).
    """
    text = content if isinstance(content, Text) else Text(content)
    if not old:
        raise EditError("oldText is empty; quote the exact text to replace.")
    matches = _exact(text, old, replace_all)
    old_lines, _lead, _trail = block_lines(old)
    if not matches and old_lines:
        for stage in _LINE_STAGES:
            matches = stage(text, old_lines, replace_all)
            if matches:
                break
    scored: list[_Scored] = []
    if not matches and old_lines and not replace_all:
        matches, scored = _fuzzy(text, old_lines)
    if not matches:
        if not old_lines:
            raise EditError("oldText (only whitespace) was not found in the file.")
        raise EditError(
            "oldText was not found in the file. " + _closest(text, old_lines, scored) + "\n"
            "Copy the current text exactly (read the file again if unsure)."
        )
    if len(matches) > 1 and not replace_all:
        raise _ambiguous(matches)
    return matches
