"""get_changed_files: the git diff of staged and unstaged changes, and conflicted files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, time_limits
from ._support.paths import project_root
from ._support.safe_git import DIFF_OPTS, run_git
from ._support.text_files import fence
from ._support.worktree_diff import unstaged_diff

STATES = ("staged", "unstaged", "merge-conflicts")
DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "read_only": True,
    "max_lines": 1000,
    "timeout": 30_000,  # milliseconds, as CodeCompanion gives timeouts
}

DESCRIPTION = (
    "Show the project's uncommitted git changes: the staged diff, the unstaged diff (with "
    "untracked files listed) and files with merge conflicts. Pick states with "
    "source_control_state, or null for all."
)

PROPERTIES = {
    "source_control_state": {
        "type": ["array", "null"],
        "items": {"type": "string", "enum": list(STATES)},
        "description": "Which changes to show (default all).",
    },
}


def _states(args: dict[str, Any]) -> list[str]:
    value = args.get("source_control_state")
    if value is None or value == []:
        return list(STATES)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or any(item not in STATES for item in value):
        raise ToolError(f"source_control_state must be a list of {', '.join(STATES)} (or null).")
    return [state for state in STATES if state in value]


def _capped(text: str, max_lines: int) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= max_lines:
        return text.rstrip("\n")
    return "\n".join(lines[:max_lines]) + f"\n... ({len(lines) - max_lines} more lines cut)"


def _section(state: str, text: str, max_lines: int) -> tuple[str, int]:
    """One well-formed `<changes>` block and how many lines of changes it holds."""
    if not text.strip():
        return f'<changes state="{state}">none</changes>', 0
    body = fence(_capped(text, max_lines), "txt" if state == "merge-conflicts" else "diff")
    return f'<changes state="{state}">\n{body}\n</changes>', text.count("\n") + 1


async def _git(root: Path, argv: tuple[str, ...], timeout: float, env: dict[str, str]) -> str:
    result = await run_git(root, argv, timeout=timeout, env=env)
    if result.exit_code != 0:
        raise ToolError(f"git {argv[0]} failed: {result.stderr.strip()[:500]}")
    return result.stdout


async def _changes(root: Path, state: str, timeout: float, env: dict[str, str]) -> str:
    """The text of one state; git only reads the index and objects (see safe_git)."""
    if state == "staged":
        return await _git(root, ("diff", "--cached", *DIFF_OPTS), timeout, env)
    if state == "merge-conflicts":
        listing = await _git(root, ("ls-files", "--unmerged", "-z"), timeout, env)
        paths = (record.split("\t", 1)[-1] for record in listing.split("\0") if "\t" in record)
        return "\n".join(dict.fromkeys(paths))
    diff, _unmerged = await unstaged_diff(root, timeout, env)
    listing = await _git(root, ("ls-files", "--others", "--exclude-standard", "-z"), timeout, env)
    untracked = "\n".join(name for name in listing.split("\0") if name)
    if untracked:
        diff = diff + ("\n" if diff else "") + "# untracked files:\n" + untracked
    return diff


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Collect the requested git changes, concurrently."""
    states = _states(args)
    root = project_root(ctx)
    _limit, timeout = time_limits(ctx.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    max_lines = int(ctx.opts.get("max_lines") or DEFAULT_OPTS["max_lines"])
    env = ctx.environment()
    probe = await run_git(root, ("rev-parse", "--is-inside-work-tree"), timeout=timeout, env=env)
    if probe.exit_code != 0 or probe.stdout.strip() != "true":
        raise ToolError("The project is not inside a git work tree, so there are no changes.")
    texts = await asyncio.gather(*(_changes(root, state, timeout, env) for state in states))
    sections = [_section(s, t, max_lines) for s, t in zip(states, texts, strict=True)]
    total = sum(count for _text, count in sections)
    text = "\n".join(block for block, _count in sections)
    user = f"Read changed files ({', '.join(states)})"
    return FunctionOutput(text, user, {"states": states, "lines": total})


TOOL = function_tool("get_changed_files", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
