"""The language servers' word on an edit: the fresh diagnostics of the changed files, the changed
region first and problems that were there before left out, as text for the edit's result."""

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


def new_problems(edited: EditedFile, now: Sequence[Diagnostic]) -> tuple[list[Diagnostic], int]:
    """The problems the edit brought (those in the changed region first) and how many of those
    found were there before it (matched by text, far from the change first, since lines move)."""
    ordered = sorted(now, key=lambda d: (_near(d, edited.changed), d.line, d.col))
    if edited.before is None:
        fresh = list(now)
        old = 0
    else:
        left = Counter(_key(d) for d in edited.before)
        fresh, old = [], 0
        for item in ordered:
            if left[_key(item)] > 0:
                left[_key(item)] -= 1
                old += 1
            else:
                fresh.append(item)
    fresh.sort(key=lambda d: (not _near(d, edited.changed), d.line, d.col))
    return fresh, old


def render(item: Diagnostic, lines: Sequence[str], shown: str | None = None) -> str:
    """`[file:]line:col SEVERITY source[code] message`, then the code line it points at."""
    origin = (item.source or "") + (f"[{item.code}]" if item.code else "")
    message = "; ".join(part.strip() for part in item.message.splitlines() if part.strip())
    place = f"{item.line + 1}:{item.col + 1}"
    parts = [f"{shown}:{place}" if shown else place, item.severity.upper(), origin, message]
    head = " ".join(part for part in parts if part)
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


async def report(
    editor: Editor | None, files: Sequence[EditedFile], options: DiagnosticsOptions
) -> str:
    """The text an edit's result gets: each file's new problems (capped), or that there are
    none; "" when it is off, there is no editor, or no language server checks these files."""
    if editor is None or options.level == "off":
        return ""
    sections: list[str] = []
    room = options.max_items
    for edited in files:
        found = await _fresh(editor, edited, options)
        if not found.servers:
            continue
        limit = SEVERITIES.index(options.min_severity)
        items = [d for d in found.items if _rank(d) <= limit]
        problems, old = new_problems(edited, items)
        servers = _servers(found, options)
        head = f"Diagnostics for {edited.shown} after the edit ({servers})"
        before = f" ({old} that were there before the edit not shown)" if old else ""
        if not problems:
            sections.append(f"{head}: {NO_NEW}{before}.")
            continue
        shown = [render(item, edited.lines, edited.shown) for item in problems[:room]]
        room = max(0, room - len(shown))
        more = len(problems) - len(shown)
        tail = f"\n... ({more} more not shown)" if more > 0 else ""
        count = f"{len(problems)} new problem{'s' if len(problems) != 1 else ''}"
        sections.append(f"{head}: {count}{before}, lines 1-based:\n" + "\n".join(shown) + tail)
    return "\n".join(sections)
