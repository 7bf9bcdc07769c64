"""file_search: project files whose path matches a glob (.gitignore respected, `.git` skipped)."""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_int, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, nullable
from ._support.linear_regex import RegexError
from ._support.paths import project_root
from ._support.project_files import glob_filter, project_files

DEFAULT_OPTS: dict[str, Any] = {"requires_approval": False, "read_only": True, "max_results": 500}

DESCRIPTION = (
    "Find files in the project by glob, e.g. `**/*.py`, `src/**/test_*.ts` or `README*`. A "
    "pattern without `/` matches file names in any folder. Case-insensitive; files ignored by "
    ".gitignore are left out. Returns paths relative to the project root."
)

PROPERTIES = {
    "query": {"type": "string", "description": "Glob pattern for the file paths."},
    "max_results": nullable("integer", "Most paths to return (default 500)."),
}


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """List the matching paths."""
    query = arg_text(args, "query").strip()
    if not query:
        raise ToolError("`query` is empty; give a glob such as `**/*.py`.")
    cap = int(ctx.opts.get("max_results") or DEFAULT_OPTS["max_results"])
    limit = arg_int(args, "max_results", cap)
    if limit < 1:
        raise ToolError(f"max_results must be 1 or more (got {limit}).")
    limit = min(limit, cap)
    try:
        listed = await project_files(project_root(ctx))
        # Off the event loop: a large project's listing takes a while to match, even linearly.
        found = await asyncio.to_thread(glob_filter, query, listed)
    except RegexError as exc:
        raise ToolError(f"{query!r} is not a valid glob: {exc}") from None
    if not found:
        return FunctionOutput(
            f"No files match `{query}`.", f"No files match `{query}`", {"count": 0}
        )
    shown = found[:limit]
    header = f"{len(found)} files match `{query}`"
    if len(found) > limit:
        header += f" (showing the first {limit}; use a narrower pattern for the rest)"
    return FunctionOutput(
        f"{header}:\n" + "\n".join(shown),
        f"Found {len(found)} files for `{query}`",
        {"count": len(found)},
    )


TOOL = function_tool("file_search", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
