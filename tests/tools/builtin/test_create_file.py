"""create_file: new files only, parent folders, diff review, path confinement."""

from __future__ import annotations

import os
from pathlib import Path

from codecompanion.ports import HunkDecision
from codecompanion.tools.builtin import create_file
from tests.support.builtin import FakeTools, prompt, run_tool
from tests.support.fakes import FakeEditor


async def test_creates_file_and_parents_without_editor(tools: FakeTools, project: Path) -> None:
    out = await run_tool(create_file, {"filepath": "a/b/new.py", "content": "x = 1\n"}, tools)
    assert out.status == "success"
    assert (project / "a/b/new.py").read_text() == "x = 1\n"
    assert out.for_llm == "Created a/b/new.py (1 line)."
    assert out.for_user == "Created `a/b/new.py`"


async def test_refuses_existing_file_and_folder(tools: FakeTools, project: Path) -> None:
    (project / "old.txt").write_text("keep\n")
    (project / "dir").mkdir()
    out = await run_tool(create_file, {"filepath": "old.txt", "content": "new"}, tools)
    assert out.status == "error"
    assert "already exists" in out.for_llm
    assert "insert_edit_into_file" in out.for_llm
    assert (project / "old.txt").read_text() == "keep\n"
    out = await run_tool(create_file, {"filepath": "dir", "content": "new"}, tools)
    assert "a folder" in out.for_llm


async def test_argument_errors(tools: FakeTools) -> None:
    out = await run_tool(create_file, {"filepath": "x.txt"}, tools)
    assert "`content` must be a string (got missing)" in out.for_llm
    out = await run_tool(create_file, {"filepath": 3, "content": ""}, tools)
    assert "`filepath` must be a string (got a int)" in out.for_llm
    out = await run_tool(create_file, {"filepath": "  ", "content": ""}, tools)
    assert "The path is empty" in out.for_llm


async def test_diff_review_accepts(project: Path) -> None:
    editor = FakeEditor(decisions=["accept"])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(create_file, {"filepath": "n.txt", "content": "a\nb\n"}, tools)
    assert out.status == "success"
    assert editor.reviews == [(str(project / "n.txt"), [], ["a", "b"])]
    assert (project / "n.txt").read_text() == "a\nb\n"


async def test_diff_review_rejects(project: Path) -> None:
    editor = FakeEditor(decisions=[HunkDecision(accepted=(), rejected=(0,), reason="wrong name")])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(create_file, {"filepath": "n.txt", "content": "a\n"}, tools)
    assert out.status == "error"
    assert "rejected creating n.txt" in out.for_llm
    assert '"wrong name"' in out.for_llm
    assert out.for_user == "Rejected creating `n.txt`"
    assert not (project / "n.txt").exists()


async def test_review_skipped_when_approved_or_yolo(project: Path) -> None:
    editor = FakeEditor(decisions=["reject", "reject"])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(create_file, {"filepath": "a.txt", "content": "a"}, tools, approved=True)
    assert out.status == "success"
    tools.yolo = True
    out = await run_tool(create_file, {"filepath": "b.txt", "content": "b"}, tools)
    assert out.status == "success"
    assert editor.reviews == []


async def test_new_file_mode_follows_umask(tools: FakeTools, project: Path) -> None:
    await run_tool(create_file, {"filepath": "m.txt", "content": "a"}, tools)
    umask = os.umask(0)
    os.umask(umask)
    assert (project / "m.txt").stat().st_mode & 0o777 == 0o666 & ~umask


async def test_outside_paths(tools: FakeTools, project: Path) -> None:
    out = await run_tool(create_file, {"filepath": "../escape.txt", "content": "x"}, tools)
    assert out.status == "error"
    assert "outside the project" in out.for_llm
    assert not (project.parent / "escape.txt").exists()
    outside = project.parent / "out"
    outside.mkdir()
    os.symlink(outside, project / "linked")
    out = await run_tool(create_file, {"filepath": "linked/x.txt", "content": "x"}, tools)
    assert out.status == "error"
    assert not (outside / "x.txt").exists()
    tools.answers.append(True)
    out = await run_tool(create_file, {"filepath": str(outside / "y.txt"), "content": "y"}, tools)
    assert out.status == "success"
    assert tools.questions[-1] == f"Allow creating a file outside the project: {outside / 'y.txt'}?"
    assert (outside / "y.txt").read_text() == "y"


def test_prompt(tools: FakeTools) -> None:

    args = {"filepath": "src/n.py", "content": ""}
    assert prompt(create_file, args, tools) == "Create the file `src/n.py`?"
