"""get_changed_files (real git repositories) and get_diagnostics (FakeEditor)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codecompanion.ports import Diagnostic
from codecompanion.tools.builtin import get_changed_files, get_diagnostics
from tests.support.builtin import FakeTools, run_tool
from tests.support.fakes import FakeEditor


def _git(root: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(project: Path) -> Path:
    _git(project, "init", "-q", "-b", "main")
    (project / "a.txt").write_text("one\ntwo\n")
    (project / "b.txt").write_text("bee\n")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "init")
    return project


async def test_staged_unstaged_and_untracked(tools: FakeTools, repo: Path) -> None:
    (repo / "a.txt").write_text("one\nTWO\n")
    _git(repo, "add", "a.txt")
    (repo / "b.txt").write_text("bee\nsting\n")
    (repo / "new.txt").write_text("fresh\n")
    out = await run_tool(get_changed_files, {"source_control_state": None}, tools)
    assert out.status == "success"
    text = out.for_llm
    staged = text[text.index('<changes state="staged">') : text.index("</changes>")]
    assert "+TWO" in staged and "sting" not in staged
    unstaged = text[text.index('<changes state="unstaged">') :]
    assert "+sting" in unstaged
    assert "# untracked files:\nnew.txt" in unstaged
    assert '<changes state="merge-conflicts">none</changes>' in text
    assert text.count("<changes ") == text.count("</changes>") == 3
    assert out.for_user == "Read changed files (staged, unstaged, merge-conflicts)"


async def test_selected_state_and_clean_tree(tools: FakeTools, repo: Path) -> None:
    out = await run_tool(get_changed_files, {"source_control_state": ["staged"]}, tools)
    assert out.for_llm == '<changes state="staged">none</changes>'


async def test_merge_conflicts_listed(tools: FakeTools, repo: Path) -> None:
    _git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.txt").write_text("one\nother\n")
    _git(repo, "commit", "-qam", "other")
    _git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("one\nmain\n")
    _git(repo, "commit", "-qam", "main")
    merge = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "other"]
    assert subprocess.run(merge, cwd=repo, capture_output=True).returncode == 1  # a conflict
    out = await run_tool(get_changed_files, {"source_control_state": ["merge-conflicts"]}, tools)
    assert out.for_llm.startswith('<changes state="merge-conflicts">\n```txt\na.txt\n```')
    assert out.for_llm.endswith("</changes>")


async def test_long_diff_is_capped(tools: FakeTools, repo: Path) -> None:
    (repo / "a.txt").write_text("".join(f"line {i}\n" for i in range(500)))
    out = await run_tool(
        get_changed_files, {"source_control_state": ["unstaged"]}, tools, opts={"max_lines": 50}
    )
    assert "more lines cut" in out.for_llm
    assert out.for_llm.endswith("</changes>")


async def test_not_a_repository_and_bad_state(tools: FakeTools, project: Path) -> None:
    out = await run_tool(get_changed_files, {"source_control_state": None}, tools)
    assert out.status == "error"
    assert "not inside a git work tree" in out.for_llm
    out = await run_tool(get_changed_files, {"source_control_state": ["dirty"]}, tools)
    assert "source_control_state must be a list of" in out.for_llm


@pytest.fixture
def diag_project(project: Path) -> tuple[FakeTools, Path, FakeEditor]:
    path = project / "m.py"
    path.write_text("import os\nx = undefined_name\n")
    editor = FakeEditor(
        diagnostic_map={
            str(path): [
                Diagnostic(1, 4, "ERROR", "undefined name 'undefined_name'", "pyflakes", "F821"),
                Diagnostic(0, 0, "WARNING", "'os' imported but unused", "pyflakes"),
            ]
        }
    )
    return FakeTools(cwd=project, editor=editor), path, editor


async def test_diagnostics_with_code_lines(
    diag_project: tuple[FakeTools, Path, FakeEditor],
) -> None:
    tools, path, editor = diag_project
    out = await run_tool(get_diagnostics, {"filepath": "m.py", "severity": "warning"}, tools)
    assert out.status == "success"
    assert out.for_llm.splitlines() == [
        "Diagnostics for m.py (2 at WARNING or worse; lines 1-based):",
        "2:5 ERROR pyflakes[F821] undefined name 'undefined_name'",
        "    > x = undefined_name",
        "1:1 WARNING pyflakes 'os' imported but unused",
        "    > import os",
    ]
    assert editor.diagnostic_calls == [(str(path), "WARNING")]
    assert out.for_user == "Got 2 diagnostics for `m.py`"


async def test_diagnostics_none_and_errors(
    diag_project: tuple[FakeTools, Path, FakeEditor],
) -> None:
    tools, path, editor = diag_project
    editor.diagnostic_map[str(path)] = []  # a server is attached and found nothing
    out = await run_tool(get_diagnostics, {"filepath": "m.py", "severity": None}, tools)
    assert out.for_llm == "No diagnostics at HINT or worse for m.py."
    editor.diagnostic_map.clear()  # none is attached
    out = await run_tool(get_diagnostics, {"filepath": "m.py", "severity": None}, tools)
    assert out.for_llm.endswith("(no language server is attached to it in Neovim).")
    out = await run_tool(get_diagnostics, {"filepath": "m.py", "severity": "fatal"}, tools)
    assert "severity must be one of" in out.for_llm
    out = await run_tool(get_diagnostics, {"filepath": "../x.py", "severity": None}, tools)
    assert "outside the project" in out.for_llm


async def test_diagnostics_without_editor(tools: FakeTools, project: Path) -> None:
    (project / "m.py").write_text("x\n")
    out = await run_tool(get_diagnostics, {"filepath": "m.py", "severity": None}, tools)
    assert out.status == "error"
    assert "no editor is attached" in out.for_llm
