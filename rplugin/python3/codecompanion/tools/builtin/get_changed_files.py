"""get_changed_files: the git diff of staged and unstaged changes, and conflicted files."""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import ToolError
from ..model.function_tool import Reply, function_tool, time_limits
from ..model.tool import Tool
from ..runtime.process import ProcessResult, run_process
from ._support.paths import project_root
from ._support.project_files import GIT_SAFE
from ._support.text_files import fence

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

_GIT = (*GIT_SAFE, "-c", "core.quotepath=off", "--no-pager")
_COMMANDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "staged": (("diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv"),),
    "unstaged": (
        ("diff", "--no-color", "--no-ext-diff", "--no-textconv"),
        ("ls-files", "--others", "--exclude-standard"),
    ),
    "merge-conflicts": (("diff", "--name-only", "--diff-filter=U"),),
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


async def _git(root: Any, argv: tuple[str, ...], timeout: float) -> ProcessResult:
    return await run_process([*_GIT, *argv], cwd=root, timeout=timeout)


def _section(state: str, results: list[ProcessResult], max_lines: int) -> tuple[str, int]:
    """One well-formed `<changes>` block and how many lines of changes it holds."""
    for result in results:
        if result.exit_code != 0:
            raise ToolError(f"git failed for {state} changes: {result.stderr.strip()[:500]}")
    text = results[0].stdout
    if state == "unstaged" and results[1].stdout.strip():
        untracked = results[1].stdout.strip()
        text = text + ("\n" if text else "") + "# untracked files:\n" + untracked
    if not text.strip():
        return f'<changes state="{state}">none</changes>', 0
    body = fence(_capped(text, max_lines), "txt" if state == "merge-conflicts" else "diff")
    return f'<changes state="{state}">\n{body}\n</changes>', text.count("\n") + 1


async def run(self: Tool, args: dict[str, Any]) -> Reply:
    """Collect the requested git changes, concurrently."""
    states = _states(args)
    root = project_root(self.tools)
    _limit, timeout = time_limits(self.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    max_lines = int(self.opts.get("max_lines") or DEFAULT_OPTS["max_lines"])
    probe = await _git(root, ("rev-parse", "--is-inside-work-tree"), timeout)
    if probe.exit_code != 0 or probe.stdout.strip() != "true":
        raise ToolError("The project is not inside a git work tree, so there are no changes.")
    jobs = [asyncio.gather(*(_git(root, argv, timeout) for argv in _COMMANDS[s])) for s in states]
    outcomes = await asyncio.gather(*jobs)
    sections = [_section(s, list(r), max_lines) for s, r in zip(states, outcomes, strict=True)]
    total = sum(count for _text, count in sections)
    text = "\n".join(block for block, _count in sections)
    user = f"Read changed files ({', '.join(states)})"
    return Reply(text, user, {"states": states, "lines": total})


TOOL = function_tool("get_changed_files", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
