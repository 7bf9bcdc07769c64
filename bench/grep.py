"""grep_search over a 10,000-file tree: the tool's time beside ripgrep's own on the same search."""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import time
from pathlib import Path

from codecompanion.messages import ToolCall
from codecompanion.tools.builtin import grep_search

from .figures import Results

FILES = 10_000
QUERY = "needle_marker"


def build_tree(root: Path, files: int = FILES) -> Path:
    """A project of `files` small source files in 100 folders; 1 in 50 holds the query."""
    rng = random.Random(10_000)
    for index in range(files):
        folder = root / f"pkg{index % 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"value_{rng.randint(0, 99999)} = {rng.randint(0, 999)}" for _ in range(30)]
        if index % 50 == 0:
            lines[rng.randrange(30)] = f"call({QUERY}, {index})"
        (folder / f"mod{index:05d}.py").write_text("\n".join(lines) + "\n")
    return root


def time_rg(root: Path, rg: str) -> float:
    """ripgrep alone, with the tool's own arguments (ms)."""
    argv = [rg, "--json", "--ignore-case", "--sort=path", "--max-count", "101"]
    argv += ["--fixed-strings", "-e", QUERY, "--", "."]
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000


def time_tool(root: Path, data: Path) -> float:
    """The grep_search tool end to end (argument checks, rg, parsing, the reply) (ms), its
    ToolContext made by the one builder as a chat's is."""
    import sys

    from codecompanion.cli.tool import CliChat, NoEvents, TerminalApprover
    from codecompanion.config import Config
    from codecompanion.workspace import HostOptions, Workspace

    workspace = Workspace(HostOptions(data_dir=str(data)), config=Config())
    approver = TerminalApprover(False, sys.stdin, sys.stderr)
    system = workspace.tool_system(CliChat(), approver=approver, events=NoEvents(), cwd=root)
    args = {"query": QUERY, "is_regexp": False, "include_pattern": None, "max_results": 100}
    ctx = system.question_context(ToolCall("g1", "grep_search", args), grep_search.TOOL.opts)
    start = time.perf_counter()
    result = asyncio.run(grep_search.run(ctx, args))
    elapsed = (time.perf_counter() - start) * 1000
    workspace.close()
    if "matching lines" not in result.for_llm:
        raise RuntimeError(f"unexpected grep result: {result.for_llm[:200]}")
    return elapsed


def run(results: Results, workdir: Path, runs: int) -> None:
    """Tool time, rg time and their ratio as info lines (rg missing: skipped with a note)."""
    rg = shutil.which("rg")
    if rg is None:
        print("bench: grep skipped: rg is not installed")
        return
    root = build_tree(workdir / "grep-tree")
    for index in range(runs + 1):
        rg_ms = time_rg(root, rg)
        tool_ms = time_tool(root, workdir / "grep-data")
        if index:
            results.note("grep 10,000 files: ripgrep alone (ms)", rg_ms)
            results.note("grep 10,000 files: grep_search tool (ms)", tool_ms)
            results.note("grep 10,000 files: tool / ripgrep", tool_ms / rg_ms)
