"""The checks that run after the model's edits: the user's `after_edit` setting (glob → command
lines), and those found in the project (ruff from `pyproject.toml` or `ruff.toml`, `lint` and
type-check scripts of `package.json`), each a command line run for the changed files that
match its glob (`{files}` stands for them, shell-quoted)."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

log = logging.getLogger("codecompanion.after_edit")

FILES = "{files}"
PYTHON = "*.py"
SCRIPTS_GLOB = "*.{js,jsx,ts,tsx,mjs,cjs,mts,cts,vue,svelte}"
# package.json scripts that check without changing anything, in the order they run.
SCRIPTS = ("lint", "typecheck", "type-check", "check-types", "tsc")
MAX_PROJECT_FILE = 1_000_000  # bytes of pyproject.toml / package.json read


@dataclass(frozen=True)
class Check:
    """One command line run after the model edited files matching `glob`."""

    glob: str
    command: str
    origin: str  # "config", or the project file it was found in

    def matches(self, path: str) -> bool:
        """Whether `path` (relative to the project, with `/`) is one this check covers."""
        import bracex  # loaded with the first round that edits a file, not with every chat

        name = path.rsplit("/", 1)[-1]
        for pattern in bracex.expand(self.glob, limit=64):
            target = path if "/" in pattern else name
            if fnmatchcase(target, pattern):
                return True
        return False

    def line_for(self, paths: Sequence[str]) -> str | None:
        """The command line for the changed `paths`, or None when none of them matches."""
        matching = [p for p in paths if self.matches(p)]
        if not matching:
            return None
        if FILES not in self.command:
            return self.command
        return self.command.replace(FILES, " ".join(shlex.quote(p) for p in matching))


def configured(value: Mapping[str, Any] | None) -> list[Check]:
    """The checks of the config file's `after_edit` (checked by config.py)."""
    checks: list[Check] = []
    for glob, commands in (value or {}).items():
        for command in [commands] if isinstance(commands, str) else commands:
            checks.append(Check(str(glob), str(command), "config"))
    return checks


def _read(path: Path) -> str | None:
    """A small project file's text, or None (missing, too big, unreadable)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_PROJECT_FILE:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _uses_ruff(root: Path) -> bool:
    if any((root / name).is_file() for name in ("ruff.toml", ".ruff.toml")):
        return True
    text = _read(root / "pyproject.toml")
    if text is None:
        return False
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            tool = tomllib.loads(text).get("tool")
        except ValueError:
            return False
        return isinstance(tool, dict) and isinstance(tool.get("ruff"), dict)
    return False  # no TOML reader in the standard library before 3.11


def _ruff(root: Path) -> list[Check]:
    """ruff, the project's own (its .venv) or the one on PATH, for Python files."""
    if not _uses_ruff(root):
        return []
    import shutil

    origin = "pyproject.toml" if (root / "pyproject.toml").is_file() else "ruff.toml"
    local = root / ".venv" / "bin" / "ruff"
    if local.is_file() and os.access(local, os.X_OK):
        program = ".venv/bin/ruff"
    elif shutil.which("ruff"):
        program = "ruff"
    else:
        return []
    command = f"{program} check --quiet --output-format=concise {FILES}"
    return [Check(PYTHON, command, origin)]


def _scripts(root: Path) -> list[Check]:
    """The package's lint and type-check scripts, through npm."""
    import shutil

    text = _read(root / "package.json")
    if text is None or shutil.which("npm") is None:
        return []
    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError):
        return []
    if not isinstance(scripts, dict):
        return []
    found = [name for name in SCRIPTS if isinstance(scripts.get(name), str)]
    return [Check(SCRIPTS_GLOB, f"npm run --silent {name}", "package.json") for name in found]


def found(root: Path) -> list[Check]:
    """The checks the project's own files name."""
    return [*_ruff(root), *_scripts(root)]


def describe(checks: Sequence[Check]) -> list[str]:
    """One line per check, as the user is shown them."""
    return [f"{c.glob}: {c.command}  ({c.origin})" for c in checks]
