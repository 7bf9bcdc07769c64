"""grep_search (ripgrep and the Python fallback) and file_search: gitignore, globs, caps."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codecompanion.tools.builtin import file_search, grep_search
from codecompanion.tools.builtin._support.project_files import compile_glob, glob_filter
from tests.support.builtin import FakeTools, run_tool

HAS_RG = shutil.which("rg") is not None
ENGINES = [
    pytest.param({"rg_path": None}, id="rg", marks=pytest.mark.skipif(not HAS_RG, reason="no rg")),
    pytest.param({"rg_path": False}, id="python"),
]


def _tree(root: Path, git: bool) -> None:
    files = {
        "src/app.py": "import os\nprint('Hello World')\n# TODO: fix\n",
        "src/util/strings.py": "def shout(s):\n    return s.upper()  # hello\n",
        "docs/guide.md": "Say hello to the world.\n-v flag is verbose\n",
        "build/out.py": "hello from a build artefact\n",
        ".hidden/secret.txt": "hello hidden\n",
        "image.bin": "hello",
        "long.txt": "hello " + "x" * 500 + "\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "image.bin").write_bytes(b"hello\x00\x01\x02")
    if git:
        (root / ".gitignore").write_text("build/\n")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def _grep(query: str, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "query": query,
        "is_regexp": None,
        "include_pattern": None,
        "max_results": None,
    }
    args.update(extra)
    return args


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_finds_lines_case_insensitively_respecting_gitignore(
    tools: FakeTools, project: Path, engine: dict[str, Any]
) -> None:
    _tree(project, git=True)
    out = await run_tool(grep_search, _grep("HELLO"), tools, opts=engine)
    assert out.status == "success"
    lines = out.for_llm.splitlines()
    assert "src/app.py:2: print('Hello World')" in lines
    assert "src/util/strings.py:2: return s.upper()  # hello" in lines
    assert "docs/guide.md:1: Say hello to the world." in lines
    assert not any(line.startswith(("build/", ".hidden/", "image.bin")) for line in lines)
    long_line = next(line for line in lines if line.startswith("long.txt:1: "))
    assert long_line.endswith("…") and len(long_line) < 230


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_without_git_walks_and_skips_hidden(
    tools: FakeTools, project: Path, engine: dict[str, Any]
) -> None:
    _tree(project, git=False)
    out = await run_tool(grep_search, _grep("hello"), tools, opts=engine)
    assert "src/app.py:2:" in out.for_llm
    assert ".hidden" not in out.for_llm


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_regexp_include_pattern_and_dash_query(
    tools: FakeTools, project: Path, engine: dict[str, Any]
) -> None:
    _tree(project, git=True)
    out = await run_tool(
        grep_search,
        _grep(r"todo:\s+\w+", is_regexp=True, include_pattern="*.py"),
        tools,
        opts=engine,
    )
    assert out.for_llm.splitlines()[1:] == ["src/app.py:3: # TODO: fix"]
    out = await run_tool(grep_search, _grep("-v flag"), tools, opts=engine)
    assert "docs/guide.md:2: -v flag is verbose" in out.for_llm
    out = await run_tool(
        grep_search, _grep("hello", include_pattern="src/util/**"), tools, opts=engine
    )
    assert out.for_llm.splitlines()[1:] == ["src/util/strings.py:2: return s.upper()  # hello"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_no_match_invalid_regex_and_cap(
    tools: FakeTools, project: Path, engine: dict[str, Any]
) -> None:
    _tree(project, git=True)
    out = await run_tool(grep_search, _grep("zebra"), tools, opts=engine)
    assert out.status == "success"
    assert out.for_llm == "No matches for `zebra`."
    out = await run_tool(grep_search, _grep("(unclosed", is_regexp=True), tools, opts=engine)
    assert out.status == "error"
    assert "Invalid regular expression" in out.for_llm
    out = await run_tool(grep_search, _grep("hello", max_results=2), tools, opts=engine)
    assert out.for_llm.startswith("2 matching lines for `hello` (stopped at 2")
    assert len(out.for_llm.splitlines()) == 3


async def test_grep_argument_errors(tools: FakeTools) -> None:
    out = await run_tool(grep_search, _grep(""), tools)
    assert "`query` is empty" in out.for_llm
    out = await run_tool(grep_search, _grep("x", max_results=0), tools)
    assert "max_results must be 1 or more" in out.for_llm
    out = await run_tool(grep_search, _grep("x", is_regexp="yes"), tools)
    assert "`is_regexp` must be true, false or null" in out.for_llm
    out = await run_tool(grep_search, {"is_regexp": True}, tools)
    assert "`query` must be a string" in out.for_llm


def test_rg_path_option(tmp_path: Path) -> None:
    assert grep_search.rg_executable({"rg_path": False}) is None
    assert grep_search.rg_executable({"rg_path": ""}) is None
    assert grep_search.rg_executable({"rg_path": str(tmp_path / "missing-rg")}) is None
    assert grep_search.rg_executable({}) == shutil.which("rg")


def _files(query: str, max_results: int | None = None) -> dict[str, Any]:
    return {"query": query, "max_results": max_results}


async def test_file_search_globs(tools: FakeTools, project: Path) -> None:
    _tree(project, git=True)
    out = await run_tool(file_search, _files("**/*.py"), tools)
    assert out.for_llm.splitlines() == [
        "2 files match `**/*.py`:",
        "src/app.py",
        "src/util/strings.py",
    ]
    out = await run_tool(file_search, _files("strings.py"), tools)
    assert out.for_llm.splitlines()[1:] == ["src/util/strings.py"]
    out = await run_tool(file_search, _files("*.{md,PY}", 1), tools)
    assert "3 files match" in out.for_llm
    assert "showing the first 1" in out.for_llm
    assert len(out.for_llm.splitlines()) == 2
    out = await run_tool(file_search, _files("nothing*"), tools)
    assert out.for_llm == "No files match `nothing*`."


async def test_file_search_skips_git_without_repo(tools: FakeTools, project: Path) -> None:
    _tree(project, git=False)
    (project / ".git").mkdir()
    (project / ".git" / "config.py").write_text("")
    out = await run_tool(file_search, _files("**"), tools)
    assert ".git/" not in out.for_llm
    assert ".hidden/secret.txt" in out.for_llm
    assert "build/out.py" in out.for_llm


async def test_file_search_in_repo_respects_gitignore(tools: FakeTools, project: Path) -> None:
    _tree(project, git=True)
    out = await run_tool(file_search, _files("**"), tools)
    assert "build/" not in out.for_llm
    assert ".gitignore" in out.for_llm
    assert ".git/" not in out.for_llm


async def test_file_search_argument_errors(tools: FakeTools) -> None:
    out = await run_tool(file_search, _files(" "), tools)
    assert "`query` is empty" in out.for_llm
    out = await run_tool(file_search, _files("*", -1), tools)
    assert "max_results must be 1 or more" in out.for_llm


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a/b/c.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("src/**/*.py", "src/a/b.py", True),
        ("src/**/*.py", "src/b.py", True),
        ("./src/*.py", "src/b.py", True),
        ("/src/*.py", "src/b.py", True),
        ("test_?.py", "t/test_1.py", True),
        ("[!a]*.txt", "b.txt", True),
        ("[!a]*.txt", "a.txt", False),
        ("docs/", "docs/x/y.md", True),
        ("*.{js,ts}", "x/y.ts", True),
        ("README*", "sub/readme.md", True),
    ],
)
def test_globs(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_filter(pattern, [path])) is hit
    assert compile_glob(pattern) is not None
