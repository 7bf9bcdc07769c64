"""grep_search: text search over the project's files (ripgrep, or Python when rg is missing)."""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import asyncio
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_bool, arg_int, arg_opt_text, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, nullable, time_limits
from ._support.confined import read_file
from ._support.linear_regex import LinearPattern, RegexError, compile_linear
from ._support.paths import project_root
from ._support.project_files import compile_glob, glob_filter, project_files
from ._support.text_files import looks_binary

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "max_results": 100,
    "timeout": 30_000,  # milliseconds, as CodeCompanion gives timeouts
    "rg_path": None,  # None: find `rg` on PATH; False or "": never use it; else its path
}
LINE_WIDTH = 200
MAX_FILE_BYTES = 2_000_000

DESCRIPTION = (
    "Search the text of the project's files (case-insensitive; .gitignore respected). Returns "
    "`path:line: text` for each matching line. The query is plain text unless is_regexp is true."
)

PROPERTIES = {
    "query": {"type": "string", "description": "Text or regular expression to search for."},
    "is_regexp": nullable("boolean", "true if query is a regular expression (default false)."),
    "include_pattern": nullable(
        "string", "Glob of files to search, e.g. `src/**/*.py` or `*.ts` (default all files)."
    ),
    "max_results": nullable("integer", "Most matching lines to return (default 100)."),
}


@dataclass(frozen=True)
class Hit:
    """One matching line."""

    path: str
    line: int
    text: str

    def render(self) -> str:
        """`path:line: text`, with a long line cut."""
        text = self.text.strip()
        if len(text) > LINE_WIDTH:
            text = text[:LINE_WIDTH] + "…"
        return f"{self.path}:{self.line}: {text}"


def rg_executable(opts: Mapping[str, Any]) -> str | None:
    """The ripgrep to use: `opts["rg_path"]` if set (False/"" for none), else `rg` on PATH."""
    import shutil

    configured = opts.get("rg_path")
    if configured is None:
        return shutil.which("rg")
    if not configured:
        return None
    return shutil.which(str(configured))


def _rg_hits(stdout: str, limit: int) -> list[Hit]:
    hits: list[Hit] = []
    for line in stdout.splitlines():
        if not line.startswith('{"type":"match"'):
            continue
        try:
            data = json.loads(line)["data"]
            path, text = data["path"]["text"], data["lines"]["text"]
        except (ValueError, KeyError, TypeError):
            continue  # non-UTF-8 paths or lines come as bytes; skipped
        hits.append(Hit(path.removeprefix("./"), int(data["line_number"]), text))
        if len(hits) > limit:
            break
    return hits


async def _search_rg(
    ctx: ToolContext,
    rg: str,
    root: Path,
    query: str,
    regexp: bool,
    include: str | None,
    limit: int,
    timeout: float,
) -> tuple[list[Hit], bool]:
    """Hits from ripgrep, and whether it timed out."""
    # --no-config: a ripgrep config file can name a preprocessor program (--pre).
    argv = [
        rg,
        "--no-config",
        "--json",
        "--ignore-case",
        "--sort=path",
        "--max-count",
        str(limit + 1),
    ]
    if not regexp:
        argv.append("--fixed-strings")
    if include:
        argv += ["--iglob", include]
    argv += ["-e", query, "--", "."]
    # Read-only, of the project's own files: outside the sandbox, as the file tools are.
    result = await ctx.commands.run(
        argv, cwd=root, timeout=timeout, max_output=8_000_000, confined=False
    )
    if result.exit_code == 2 and '"type":"match"' not in result.stdout:
        message = result.stderr.strip() or "ripgrep failed"
        if "regex" in message.lower():
            raise ToolError(f"Invalid regular expression {query!r}:\n{message}")
        raise ToolError(f"The search failed: {message}")
    return _rg_hits(result.stdout, limit), result.timed_out


@dataclass(frozen=True)
class Scan:
    """One Python search: what to look for, where, and when to give up."""

    root: Path
    files: list[str]
    pattern: LinearPattern
    limit: int
    deadline: float
    stop: threading.Event

    def over(self) -> bool:
        """True once the search was stopped or ran out of time."""
        return self.stop.is_set() or time.monotonic() > self.deadline


def _scan(scan: Scan) -> tuple[list[Hit], bool]:
    """Hits from reading the files in Python (a worker thread), and whether it stopped early."""
    hits: list[Hit] = []
    for name in scan.files:
        if scan.over():
            return hits, True
        try:
            # Like rg: links are not followed (not even a folder swapped for one meanwhile), so
            # a link cannot show a file outside the project; FIFOs and devices are not opened.
            data, _info = read_file(scan.root / name, name, MAX_FILE_BYTES)
        except (OSError, ToolError):
            continue
        if looks_binary(data):
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if number % 4096 == 0 and scan.over():
                return hits, True
            if scan.pattern.search(line):
                hits.append(Hit(name, number, line))
                if len(hits) > scan.limit:
                    return hits, False
    return hits, False


async def _search_python(
    root: Path, query: str, regexp: bool, include: str | None, limit: int, timeout: float
) -> tuple[list[Hit], bool]:
    """Hits, and whether the search timed out. Matching is linear (RE2), and a stop or the
    tool's timeout ends the worker thread too."""
    try:
        pattern = compile_linear(query, ignore_case=True, literal=not regexp)
    except RegexError as exc:
        raise ToolError(f"Invalid regular expression {query!r}: {exc}") from None
    listed = await project_files(root, hidden=False)
    files = await asyncio.to_thread(glob_filter, include, listed)
    scan = Scan(root, sorted(files), pattern, limit, time.monotonic() + timeout, threading.Event())
    try:
        return await asyncio.to_thread(_scan, scan)
    finally:
        scan.stop.set()


def _limit(ctx: ToolContext, args: dict[str, Any]) -> int:
    cap = int(ctx.opts.get("max_results") or DEFAULT_OPTS["max_results"])
    wanted = arg_int(args, "max_results", cap)
    if wanted < 1:
        raise ToolError(f"max_results must be 1 or more (got {wanted}).")
    return min(wanted, cap)


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Search and list the matching lines."""
    query = arg_text(args, "query")
    if not query:
        raise ToolError("`query` is empty.")
    regexp = arg_bool(args, "is_regexp", False)
    include = arg_opt_text(args, "include_pattern") or None
    if include is not None:
        try:
            compile_glob(include)
        except ValueError as exc:  # RegexError included
            raise ToolError(f"include_pattern {include!r} is not a valid glob: {exc}") from None
    limit = _limit(ctx, args)
    root = project_root(ctx)
    rg = rg_executable(ctx.opts)
    _limit_s, own = time_limits(ctx.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    if rg:
        hits, timed_out = await _search_rg(ctx, rg, root, query, regexp, include, limit, own)
    else:
        hits, timed_out = await _search_python(root, query, regexp, include, limit, own)
    return _reply(query, include, hits, limit, timed_out)


def _reply(
    query: str, include: str | None, hits: list[Hit], limit: int, timed_out: bool
) -> FunctionOutput:
    scope = f" in `{include}`" if include else ""
    more = len(hits) > limit
    hits = hits[:limit]
    if not hits:
        note = " (the search timed out)" if timed_out else ""
        return FunctionOutput(
            f"No matches for `{query}`{scope}{note}.", f"No matches for `{query}`", {"count": 0}
        )
    header = f"{len(hits)} matching lines for `{query}`{scope}"
    if more:
        header += f" (stopped at {limit}; narrow the query or include_pattern to see others)"
    if timed_out:
        header += " (the search timed out; results are partial)"
    body = "\n".join(hit.render() for hit in hits)
    user = f"Searched for `{query}`: {len(hits)}{'+' if more else ''} results"
    return FunctionOutput(f"{header}:\n{body}", user, {"count": len(hits), "more": more})


TOOL = function_tool("grep_search", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
