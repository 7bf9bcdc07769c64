"""Skills found on disk: front matter read, broken ones skipped with one line, names unique."""

from __future__ import annotations

from pathlib import Path

import pytest

from codecompanion.frontmatter import FrontMatterError, names_field, split
from codecompanion.messages import MessageStore
from codecompanion.skills import ChatSkills, SkillOptions, discover
from tests.support.skill_files import skill_text, write_skill


def test_front_matter_is_yaml_and_its_body_follows() -> None:
    document = split("---\nname: pdf\ndescription: >\n  Fill in\n  PDF forms\n---\n# Steps\n")
    assert document.fields == {"name": "pdf", "description": "Fill in PDF forms"}
    assert document.body == "# Steps"
    assert names_field({"t": "Read, Grep  Bash"}, "t") == ("Read", "Grep", "Bash")
    assert names_field({"t": ["Read", "Grep"]}, "t") == ("Read", "Grep")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("name: x\n", "no front matter"),
        ("---\nname: x\n", "no closing ---"),
        ("---\nname: [x\n---\n", "line 2"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
    ],
)
def test_broken_front_matter_is_one_line(text: str, said: str) -> None:
    with pytest.raises(FrontMatterError) as raised:
        split(text)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_project_and_user_skills_are_found_and_broken_ones_skipped(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    write_skill(root / ".claude/skills", "pdf", skill_text("pdf", "Fill in PDF forms."))
    write_skill(root / ".agents/skills", "notes", skill_text("release-notes", "Write notes."))
    write_skill(root / ".claude/skills", "bad", "---\nname: bad\n---\nno description\n")
    write_skill(home / ".claude/skills", "pdf", skill_text("pdf", "The user's own pdf skill."))
    write_skill(home / "mine", "lint", skill_text("lint", "Lint the code."))
    (root / ".claude/skills/empty").mkdir()  # no SKILL.md: not a skill
    found = discover(root, SkillOptions(folders=("~/mine",)), home)
    assert [(s.name, s.label) for s in found.skills] == [
        ("release-notes", ".agents/skills/notes"),
        ("pdf", ".claude/skills/pdf"),
        ("lint", "~/mine/lint"),
    ]
    assert found.problems == [
        "skipped .claude/skills/bad: `description` is missing",
        "skipped ~/.claude/skills/pdf: .claude/skills/pdf has that name",
    ]
    assert discover(root, SkillOptions(enabled=False), home).skills == []


def test_the_chat_lists_each_skill_on_one_line_and_toggles_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_skill(root / ".claude/skills", "pdf", skill_text("pdf", "Fill in\n  PDF forms."))
    write_skill(root / ".claude/skills", "sql", skill_text("sql", "Query the database."))
    skills = ChatSkills(root, SkillOptions(), tmp_path / "home")
    messages = MessageStore()
    messages.insert_system("You are an assistant.", "system_prompt", 0)
    line = skills.sync(messages)
    assert line == "Skills: pdf, sql"
    text = next(m.content for m in messages if m.tag == "skills")
    assert "- pdf: Fill in PDF forms.\n- sql: Query the database." in text
    assert "Do the thing." not in text  # the body waits until the model asks
    assert skills.sync(messages) is None  # nothing changed: nothing shown again
    assert skills.toggle("pdf").startswith("skill pdf off")
    assert skills.sync(messages) == "Skills: sql"
    assert "pdf" not in next(m.content for m in messages if m.tag == "skills")
    skills.toggle("sql")
    skills.sync(messages)
    assert not any(m.tag == "skills" for m in messages)
