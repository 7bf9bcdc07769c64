"""delete_file: regular files only, confinement, approval options."""

from __future__ import annotations

import os
from pathlib import Path

from codecompanion.tools.builtin import delete_file
from tests.support.builtin import FakeTools, prompt, run_tool


async def test_deletes_a_regular_file(tools: FakeTools, project: Path) -> None:
    (project / "sub").mkdir()
    (project / "sub/gone.txt").write_text("bye")
    out = await run_tool(delete_file, {"filepath": "sub/gone.txt"}, tools)
    assert out.status == "success"
    assert out.for_llm == "Deleted sub/gone.txt."
    assert out.for_user == "Deleted `sub/gone.txt`"
    assert not (project / "sub/gone.txt").exists()


async def test_refuses_folders_links_and_missing(tools: FakeTools, project: Path) -> None:
    (project / "dir").mkdir()
    (project / "target.txt").write_text("t")
    os.symlink(project / "target.txt", project / "link.txt")
    out = await run_tool(delete_file, {"filepath": "dir"}, tools)
    assert "is a folder" in out.for_llm
    out = await run_tool(delete_file, {"filepath": "link.txt"}, tools)
    assert "symbolic link" in out.for_llm
    out = await run_tool(delete_file, {"filepath": "missing.txt"}, tools)
    assert "No such file or directory: missing.txt" in out.for_llm
    out = await run_tool(delete_file, {}, tools)
    assert "`filepath` must be a string" in out.for_llm
    assert (project / "dir").is_dir() and (project / "target.txt").exists()
    assert os.path.islink(project / "link.txt")


async def test_outside_file_needs_the_users_yes(tools: FakeTools, project: Path) -> None:
    victim = project.parent / "victim.txt"
    victim.write_text("v")
    out = await run_tool(delete_file, {"filepath": "../victim.txt"}, tools)
    assert out.status == "error"
    assert victim.exists()
    assert tools.questions == [f"Allow deleting a file outside the project: {victim}?"]
    tools.answers.append(True)
    out = await run_tool(delete_file, {"filepath": "../victim.txt"}, tools)
    assert out.status == "success"
    assert not victim.exists()


async def test_file_inside_symlinked_folder_outside_is_outside(
    tools: FakeTools, project: Path
) -> None:
    outside = project.parent / "data"
    outside.mkdir()
    (outside / "keep.txt").write_text("k")
    os.symlink(outside, project / "data")
    out = await run_tool(delete_file, {"filepath": "data/keep.txt"}, tools)
    assert out.status == "error"
    assert "outside the project" in out.for_llm
    assert (outside / "keep.txt").exists()


def test_approval_options_and_prompt(tools: FakeTools) -> None:
    opts = delete_file.TOOL.opts
    assert opts["requires_approval"] is True
    assert opts["allowed_in_yolo_mode"] is False
    assert delete_file.DEFAULT_OPTS == opts
    args = {"filepath": "./a/../b.txt"}
    assert prompt(delete_file, args, tools) == "Delete the file `b.txt`?"
    assert opts["approval_key"](args) == "./a/../b.txt"
