"""Skill folders written for tests: a SKILL.md with front matter and a body."""

from __future__ import annotations

from pathlib import Path


def write_skill(folder: Path, name: str, text: str) -> Path:
    """A skill folder `folder/name` holding SKILL.md with `text`."""
    path = folder / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)
    return path


def skill_text(name: str, description: str, body: str = "Do the thing.") -> str:
    """A SKILL.md's text: front matter naming the skill, then `body`."""
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"
