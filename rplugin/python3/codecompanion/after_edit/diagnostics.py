"""The language servers' word on the model's files: after an edit, the fresh diagnostics of the
changed files (new problems, the changed region first; those still there near it; those it fixed),
and with a read, the file's problems now, as text for the tool's result."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import ToolError
from ..ports import Diagnostic, Editor, FreshDiagnostics

log = logging.getLogger("codecompanion.after_edit")

Level = Literal["problems", "errors", "off"]
SEVERITIES = ("ERROR", "WARNING", "INFORMATION", "HINT")
NEAR = 3  # lines either side of a change that still count as its region
NO_NEW = "no new problems"


@dataclass(frozen=True)
class DiagnosticsOptions:
    """`opts["editor"]`: what an edit's result carries from the language servers."""

    level: Level = "problems"  # errors and warnings; "errors": errors only; "off": nothing
    wait: float = 1.5  # seconds to wait for the servers' next publish after the write
    max_items: int = 20
    max_load_bytes: int = 5_000_000  # a file not loaded is loaded only up to this size

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any]) -> DiagnosticsOptions:
        """Read `opts["editor"]` (checked by config.py; anything else falls back)."""
        section = opts.get("editor")
        editor = section if isinstance(section, Mapping) else {}
        level = editor.get("diagnostics", "problems")
        if level is False:
            level = "off"
        elif level is True:
            level = "problems"
        wait = editor.get("diagnostics_wait", cls.wait)
        count = editor.get("max_diagnostics", cls.max_items)
        return cls(
            level=level if level in ("problems", "errors", "off") else "problems",
            wait=float(wait) if isinstance(wait, (int, float)) and wait >= 0 else cls.wait,
            max_items=count if isinstance(count, int) and count > 0 else cls.max_items,
        )

    @property
    def min_severity(self) -> str:
        """The least severe level reported."""
        return "ERROR" if self.level == "errors" else "WARNING"


@dataclass(frozen=True)
class EditedFile:
    """A file a tool just changed: its lines now, where they changed, and (when the editor
    knew) its diagnostics before the change."""

    path: Path
    shown: str
    lines: Sequence[str]
    changed: tuple[tuple[int, int], ...] = ()  # 0-based [start, end) ranges of the new lines
    before: tuple[Diagnostic, ...] | None = None


def _near(item: Diagnostic, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(start - NEAR <= item.line < end + NEAR for start, end in ranges)


def _rank(item: Diagnostic) -> int:
    upper = item.severity.upper()
    return SEVERITIES.index(upper) if upper in SEVERITIES else len(SEVERITIES)


def _key(item: Diagnostic) -> tuple[str, str | None, str | None, str]:
    return (item.severity, item.source, item.code, item.message)


@dataclass(frozen=True)
class Compared:
    """An edit's problems against those before it: `new` ones (the changed region first),
    those `kept` from before, and those `gone` (as they were before the edit)."""

    new: list[Diagnostic]
    kept: list[Diagnostic]
    gone: list[Diagnostic]


def compare(edited: EditedFile, now: Sequence[Diagnostic]) -> Compared:
    """Match the problems now with those before the edit by text (far from the change first,
    since lines move); with nothing known before, every problem is new."""
    if edited.before is None:
        fresh = sorted(now, key=lambda d: (not _near(d, edited.changed), d.line, d.col))
        return Compared(fresh, [], [])
    ordered = sorted(now, key=lambda d: (_near(d, edited.changed), d.line, d.col))
    left = Counter(_key(d) for d in edited.before)
    fresh, kept = [], []
    for item in ordered:
        if left[_key(item)] > 0:
            left[_key(item)] -= 1
            kept.append(item)
        else:
            fresh.append(item)
    gone = []
    for item in edited.before:
        if left[_key(item)] > 0:
            left[_key(item)] -= 1
            gone.append(item)
    fresh.sort(key=lambda d: (not _near(d, edited.changed), d.line, d.col))
    kept.sort(key=lambda d: (d.line, d.col))
    return Compared(fresh, kept, gone)


def _summary(item: Diagnostic) -> str:
    """`SEVERITY source[code] message`."""
    origin = (item.source or "") + (f"[{item.code}]" if item.code else "")
    message = "; ".join(part.strip() for part in item.message.splitlines() if part.strip())
    return " ".join(part for part in (item.severity.upper(), origin, message) if part)


def render(item: Diagnostic, lines: Sequence[str], shown: str | None = None) -> str:
    """`[file:]line:col SEVERITY source[code] message`, then the code line it points at."""
    place = f"{item.line + 1}:{item.col + 1}"
    head = f"{shown}:{place}" if shown else place
    head = f"{head} {_summary(item)}"
    code = lines[item.line].strip() if 0 <= item.line < len(lines) else ""
    return f"{head}\n    > {code[:200]}" if code else head


async def _fresh(
    editor: Editor, edited: EditedFile, options: DiagnosticsOptions
) -> FreshDiagnostics:
    try:
        return await editor.diagnostics(
            str(edited.path), options.min_severity, options.max_load_bytes, options.wait
        )
    except ToolError as exc:
        log.info("no diagnostics after editing %s: %s", edited.shown, exc)
        return FreshDiagnostics()


def _servers(found: FreshDiagnostics, options: DiagnosticsOptions) -> str:
    """The servers that answered, and whether they were late."""
    names = ", ".join(dict.fromkeys(found.servers))
    late = (
        f"; {names} did not publish within {options.wait:g} s, so these may be from before"
        if found.timed_out
        else ""
    )
    return f"{names}{late}"


def _section(edited: EditedFile, compared: Compared, servers: str, room: int) -> list[str]:
    """The lines of one file's part: new problems (at most `room`), those still there near the
    change, those the edit fixed."""
    head = f"Diagnostics for {edited.shown} after the edit ({servers})"
    near = [d for d in compared.kept if _near(d, edited.changed)]
    away = len(compared.kept) - len(near)
    before = f" ({away} that were there before the edit, away from it, not shown)" if away else ""
    new = compared.new
    count = f"{len(new)} new problem{'s' if len(new) != 1 else ''}" if new else NO_NEW
    if not (new or near or compared.gone):
        return [f"{head}: {NO_NEW}{before}."]
    lines = [f"{head}: {count}{before}, lines 1-based:"]
    lines += [render(item, edited.lines, edited.shown) for item in new[:room]]
    if len(new) > room:
        lines.append(f"... ({len(new) - room} more not shown)")
    for item in near[:room]:
        lines.append(
            f"still there from before the edit: {render(item, edited.lines, edited.shown)}"
        )
    for item in compared.gone[:room]:
        lines.append(f"fixed by the edit (was line {item.line + 1}): {_summary(item)}")
    return lines


async def report(
    editor: Editor | None, files: Sequence[EditedFile], options: DiagnosticsOptions
) -> str:
    """The text an edit's result gets: each file's new problems (capped), those still there
    near the change and those it fixed, or that there are none; "" when it is off, there is no
    editor, or no language server checks these files."""
    if editor is None or options.level == "off":
        return ""
    sections: list[str] = []
    room = options.max_items
    limit = SEVERITIES.index(options.min_severity)
    for edited in files:
        found = await _fresh(editor, edited, options)
        if not found.servers:
            continue
        items = [d for d in found.items if _rank(d) <= limit]
        compared = compare(edited, items)
        sections += _section(edited, compared, _servers(found, options), room)
        room = max(0, room - len(compared.new))
    return "\n".join(sections)


async def current(
    editor: Editor, edited: EditedFile, span: tuple[int, int], options: DiagnosticsOptions
) -> str:
    """The problems the servers see in a file now, as a paragraph for a read of its lines
    `span` (0-based, inclusive): those on these lines, and how many are elsewhere; "" when no
    server checks it."""
    found = await _fresh(editor, edited, options)
    if not found.servers:
        return ""
    limit = SEVERITIES.index(options.min_severity)
    items = sorted((d for d in found.items if _rank(d) <= limit), key=lambda d: (d.line, d.col))
    inside = [d for d in items if span[0] <= d.line <= span[1]]
    elsewhere = len(items) - len(inside)
    other = f" ({elsewhere} more on lines not read)" if elsewhere else ""
    head = f"Diagnostics for {edited.shown} now ({_servers(found, options)})"
    if not inside:
        return f"{head}: no problems on these lines{other}."
    shown = [render(item, edited.lines) for item in inside[: options.max_items]]
    more = len(inside) - len(shown)
    tail = f"\n... ({more} more not shown)" if more > 0 else ""
    count = f"{len(inside)} problem{'s' if len(inside) != 1 else ''}"
    return f"{head}: {count}{other}, lines 1-based:\n" + "\n".join(shown) + tail
