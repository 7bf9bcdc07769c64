"""Path confinement: `..`, `~`, absolute paths, symlinks (files and parent folders), bad text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codecompanion.errors import ToolError
from codecompanion.tools.builtin._support.paths import (
    clean_path_text,
    describe_path,
    display_path,
    is_inside,
    resolve_path,
)
from tests.support.builtin import FakeTools


async def test_inside_paths_resolve_without_asking(tools: FakeTools, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src/a.py").write_text("")
    for raw in ("src/a.py", "./src/../src/a.py", str(project / "src/a.py"), " src/a.py "):
        path = await resolve_path(tools, raw, must_exist=True, purpose="reading a file")
        assert path == project / "src/a.py"
    assert tools.questions == []


async def test_missing_path(tools: FakeTools) -> None:
    with pytest.raises(ToolError, match="No such file or directory: nope/x.py"):
        await resolve_path(tools, "nope/x.py", must_exist=True, purpose="reading a file")
    path = await resolve_path(tools, "nope/x.py", must_exist=False, purpose="creating a file")
    assert path.name == "x.py"


@pytest.mark.parametrize("raw", ["..", "../x", "/etc/hostname", "a/../../x"])
async def test_outside_paths_ask_for_that_exact_path(
    tools: FakeTools, project: Path, raw: str
) -> None:
    with pytest.raises(ToolError, match="outside the project"):
        await resolve_path(tools, raw, must_exist=False, purpose="reading a file")
    expected = Path(os.path.realpath(os.path.join(project, raw)))
    assert tools.questions == [f"Allow reading a file outside the project: {expected}?"]


async def test_approved_outside_path_is_returned(tools: FakeTools, project: Path) -> None:
    tools.answers.append(True)
    path = await resolve_path(tools, "../elsewhere.txt", must_exist=False, purpose="x")
    assert path == project.parent / "elsewhere.txt"


async def test_home_is_expanded(tools: FakeTools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tools.cwd))
    (tools.cwd / "notes.txt").write_text("")
    path = await resolve_path(tools, "~/notes.txt", must_exist=True, purpose="reading a file")
    assert path == tools.cwd / "notes.txt"


async def test_symlinked_parent_outside_counts_as_outside(tools: FakeTools, project: Path) -> None:
    outside = project.parent / "shared"
    outside.mkdir()
    os.symlink(outside, project / "shared")
    with pytest.raises(ToolError, match="outside the project"):
        await resolve_path(tools, "shared/new.txt", must_exist=False, purpose="creating a file")
    assert tools.questions == [f"Allow creating a file outside the project: {outside / 'new.txt'}?"]


async def test_symlink_inside_pointing_inside_is_fine(tools: FakeTools, project: Path) -> None:
    (project / "real.txt").write_text("")
    os.symlink(project / "real.txt", project / "alias.txt")
    path = await resolve_path(tools, "alias.txt", must_exist=True, purpose="reading a file")
    assert path == project / "real.txt"


async def test_root_itself_is_inside_and_a_sibling_prefix_is_not(
    tools: FakeTools, project: Path
) -> None:
    assert await resolve_path(tools, ".", must_exist=True, purpose="x") == project
    sibling = project.parent / (project.name + "-other")
    sibling.mkdir()
    with pytest.raises(ToolError, match="outside"):
        await resolve_path(tools, str(sibling), must_exist=True, purpose="x")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("a\x00b", "NUL byte"),
        ("a\nb", "newline"),
        ("a\rb", "carriage return"),
        ("", "empty"),
        ("   ", "empty"),
        (None, "must be a string"),
        (42, "must be a string"),
    ],
)
def test_bad_path_text(raw: object, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        clean_path_text(raw)


def test_display_and_describe(tools: FakeTools, project: Path) -> None:
    assert display_path(project, project / "a/b.py") == "a/b.py"
    assert display_path(project, Path("/etc/x")) == "/etc/x"
    assert is_inside(project, project)
    assert not is_inside(project, project.parent)
    assert describe_path(tools, "./x/../y.py") == "y.py"
    assert describe_path(tools, None) == "None"
    assert describe_path(tools, "bad\x00") == "bad\x00"
