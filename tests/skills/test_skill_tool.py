"""The `skill` tool: a skill's instructions and files, read only inside its folder."""

from __future__ import annotations

import os
from pathlib import Path

from codecompanion.messages import ToolCall
from codecompanion.skills import ChatSkills, SkillOptions
from tests.support.fakes import ScriptedApprover
from tests.support.skill_files import skill_text, write_skill
from tests.support.tools import builtin_system


def _system(root: Path, home: Path):  # type: ignore[no-untyped-def]
    approver = ScriptedApprover(default="reject")
    system, chat = builtin_system(root, "skill", approver=approver)
    system.skills = ChatSkills(root, SkillOptions(), home)
    system.skills.found()
    return system, chat, approver


async def test_instructions_then_a_file_of_the_skill(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    folder = write_skill(home / ".claude/skills", "pdf", skill_text("pdf", "PDFs.", "Run fill.py"))
    (folder / "scripts").mkdir()
    (folder / "scripts/fill.py").write_text("print('filled')\n")
    system, chat, approver = _system(root, home)
    await system.run([ToolCall("c1", "skill", {"name": "pdf", "file": None})])
    result = chat.result("c1")
    assert not result.is_error, result.for_llm
    assert "Run fill.py" in result.for_llm and "- scripts/fill.py" in result.for_llm
    assert "description" not in result.for_llm  # the front matter is not sent again
    await system.run([ToolCall("c2", "skill", {"name": "pdf", "file": "scripts/fill.py"})])
    assert "print('filled')" in chat.result("c2").for_llm
    assert approver.requests == []  # reading a skill is never asked about


async def test_paths_out_of_the_skill_and_unknown_skills_are_refused(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    folder = write_skill(root / ".claude/skills", "pdf", skill_text("pdf", "PDFs."))
    (root / "secret.txt").write_text("secret\n")
    os.symlink(root / "secret.txt", folder / "link.txt")
    system, chat, _ = _system(root, home)
    calls = [
        ToolCall("c1", "skill", {"name": "pdf", "file": "../../../secret.txt"}),
        ToolCall("c2", "skill", {"name": "pdf", "file": "link.txt"}),
        ToolCall("c3", "skill", {"name": "nope", "file": None}),
    ]
    await system.run(calls)
    for call_id in ("c1", "c2"):
        result = chat.result(call_id)
        assert result.is_error and "outside the folder of skill `pdf`" in result.for_llm
        assert "secret\n" not in result.for_llm
    assert "no skill called `nope`" in chat.result("c3").for_llm
    assert "`pdf`" in chat.result("c3").for_llm
