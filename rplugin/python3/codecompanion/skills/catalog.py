"""Finding skills: folders holding a `SKILL.md` (the Agent Skills format Claude Code, Codex,
Copilot and Zed read) in the project and the user's config folders.

Each skill folder's `SKILL.md` starts with YAML front matter naming the skill (`name`),
saying when to use it (`description`) and, optionally, the tools it expects
(`allowed-tools`). Only that front matter is read here; the instructions below it and the
folder's other files are read when the model asks for them (the `skill` tool). A skill whose
front matter is broken is skipped with one line saying why; the first skill of a name wins
(project folders first, then the user's, then the folders the config file adds).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..frontmatter import FrontMatterError, names_field, split, text_field

log = logging.getLogger("codecompanion.skills")

PROJECT_FOLDERS = (".agents/skills", ".claude/skills")
USER_FOLDERS = ("~/.claude/skills", "~/.config/agents/skills")
SKILL_FILE = "SKILL.md"
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256_000
MAX_SKILLS = 200  # per folder: a folder of thousands is a mistake, not a catalogue
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Skill:
    """One skill: its name, when to use it, its folder (resolved) and how the chat names it."""

    name: str
    description: str
    folder: Path
    label: str
    allowed_tools: tuple[str, ...] = ()

    def line(self) -> str:
        """The skill as the system prompt lists it: one line."""
        return f"- {self.name}: {self.description}"


@dataclass(frozen=True)
class SkillOptions:
    """`opts["skills"]`: whether skills are offered, and more folders to look in."""

    enabled: bool = True
    folders: tuple[str, ...] = ()

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any] | None) -> SkillOptions:
        """The options from a checked `opts["skills"]`."""
        opts = opts or {}
        return cls(
            enabled=bool(opts.get("enabled", True)),
            folders=tuple(str(f) for f in opts.get("folders") or ()),
        )


@dataclass
class Found:
    """What one look found: the skills in order, and one line per folder skipped."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def search_folders(root: Path, options: SkillOptions, home: Path) -> list[tuple[Path, str]]:
    """The folders that hold skill folders, with how each is shown: project, user, config."""
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    folders = [(root / name, name) for name in PROJECT_FOLDERS]
    for name in (*USER_FOLDERS, *options.folders):
        if name.startswith("~/.config/"):
            path = config / name[len("~/.config/") :]
        elif name.startswith("~/"):
            path = home / name[2:]
        else:
            path = root / name  # a relative folder of the config is the project's
        folders.append((path, name))
    return folders


def discover(root: Path, options: SkillOptions, home: Path | None = None) -> Found:
    """Every skill in the search folders (nothing when skills are turned off)."""
    found = Found()
    if not options.enabled:
        return found
    seen: dict[str, str] = {}
    for folder, shown in search_folders(root, options, home or Path.home()):
        for skill_dir in _skill_dirs(folder):
            label = f"{shown}/{skill_dir.name}"
            try:
                skill = read_skill(skill_dir, label)
            except FrontMatterError as exc:
                found.problems.append(f"skipped {label}: {exc}")
                continue
            if skill.name in seen:
                found.problems.append(f"skipped {label}: {seen[skill.name]} has that name")
                continue
            seen[skill.name] = label
            found.skills.append(skill)
    for line in found.problems:
        log.warning("skills: %s", line)
    return found


def _skill_dirs(folder: Path) -> list[Path]:
    """The folders in `folder` that hold a SKILL.md, by name (a missing folder: none)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return []
    dirs = [
        Path(entry.path)
        for entry in entries
        if not entry.name.startswith(".")
        and entry.is_dir()
        and os.path.isfile(os.path.join(entry.path, SKILL_FILE))
    ]
    return dirs[:MAX_SKILLS]


def read_skill(skill_dir: Path, label: str) -> Skill:
    """The skill in `skill_dir` from its SKILL.md's front matter; FrontMatterError if broken."""
    try:
        with open(skill_dir / SKILL_FILE, "rb") as handle:
            data = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise FrontMatterError(f"cannot read {SKILL_FILE}: {exc.strerror or exc}") from None
    if len(data) > MAX_SKILL_BYTES:
        raise FrontMatterError(f"{SKILL_FILE} is over {MAX_SKILL_BYTES:,} bytes")
    document = split(data.decode("utf-8", errors="replace"))
    name = text_field(document.fields, "name") or ""
    if not _NAME.match(name):
        raise FrontMatterError(
            f"`name` {name[:40]!r} must be letters, digits, '-', '_' or '.' (at most 64)"
        )
    description = text_field(document.fields, "description") or ""
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    tools = names_field(document.fields, "allowed-tools") or ()
    return Skill(name, description, Path(os.path.realpath(skill_dir)), label, tools)
