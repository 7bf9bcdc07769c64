"""The skill examples of README.md and :help work as written, offline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codecompanion.skills import SkillOptions, discover
from codecompanion.skills.catalog import read_skill

ROOT = Path(__file__).resolve().parents[2]


def _examples() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Skills, subagents and hooks") :]
    found = re.findall(r"```markdown\n(.*?)```", section, re.S)[:1]
    help_text = (ROOT / "doc" / "codecompanion.txt").read_text()
    section = help_text[help_text.index("*codecompanion-skills*") :]
    block = re.findall(r">markdown\n(.*?)\n<", section, re.S)[0]
    found.append("\n".join(line[4:] for line in block.splitlines()))
    return found


@pytest.mark.parametrize("text", _examples())
def test_the_documented_skill_is_found_with_its_description(text: str, tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    skill = read_skill(folder, ".claude/skills/release-notes")
    assert skill.name == "release-notes" and "release notes" in skill.description
    found = discover(tmp_path, SkillOptions(), tmp_path / "home")
    assert [s.name for s in found.skills] == ["release-notes"] and not found.problems
