"""read_file: lines of a text file in the project, by 0-based inclusive range."""

from __future__ import annotations

from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_int, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool
from ._support.after_write import diagnostics_now
from ._support.paths import resolve_shown
from ._support.text_files import fence, read_source

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "read_only": True,  # several calls in one answer run together
    "max_lines": 2000,
    "max_bytes": 200_000,
}

DESCRIPTION = (
    "Read lines of a text file in the project. Line numbers are 0-based and the range is "
    "inclusive; end_line_number_base_zero -1 means the end of the file. Large files must be "
    "read in ranges (at most about 2000 lines or 200 KB per call). If the file is open in the "
    "editor, its current (possibly unsaved) text is returned."
)

PROPERTIES = {
    "filepath": {
        "type": "string",
        "description": "Path of the file, relative to the project root.",
    },
    "start_line_number_base_zero": {
        "type": "integer",
        "description": "First line to read, 0-based (0 is the first line).",
    },
    "end_line_number_base_zero": {
        "type": "integer",
        "description": "Last line to read, 0-based and inclusive; -1 for the end of the file.",
    },
}


def _check_range(start: int, end: int, total: int, shown: str) -> int:
    """The end line after range checks (clamped to the last line)."""
    if start < 0:
        raise ToolError(f"start_line_number_base_zero must be 0 or more (got {start}).")
    if end < -1:
        raise ToolError(f"end_line_number_base_zero must be -1 or more (got {end}).")
    if start >= total:
        raise ToolError(
            f"start_line_number_base_zero {start} is past the end of {shown}, which has {total} "
            f"lines (valid starts are 0 to {total - 1})."
        )
    if end != -1 and end < start:
        raise ToolError(f"The range is backwards: end {end} is before start {start}.")
    return total - 1 if end == -1 or end >= total else end


def _body(ctx: ToolContext, shown: str, lines: list[str], start: int, end: int) -> str:
    """Lines `start`..`end` as one text; a read over the line or byte limit is refused, saying
    how to read it in ranges."""
    max_lines = int(ctx.opts.get("max_lines", DEFAULT_OPTS["max_lines"]))
    max_bytes = int(ctx.opts.get("max_bytes", DEFAULT_OPTS["max_bytes"]))
    count = end - start + 1
    body = "\n".join(lines[start : end + 1])
    size = len(body.encode("utf-8")) + 1  # each line's bytes and its line end
    if count <= max_lines and size <= max_bytes:
        return body
    step = max(1, min(max_lines, count * max_bytes // max(size, 1)))
    raise ToolError(
        f"{shown} has {len(lines):,} lines; lines {start}-{end} are {count:,} lines and "
        f"{size:,} bytes, over the limit of {max_lines:,} lines or {max_bytes:,} bytes per read. "
        f"Read it in ranges, e.g. start_line_number_base_zero={start}, "
        f"end_line_number_base_zero={start + step - 1}."
    )


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Read the requested lines."""
    raw = arg_text(args, "filepath")
    start = arg_int(args, "start_line_number_base_zero", 0)
    end = arg_int(args, "end_line_number_base_zero", -1)
    path, shown = await resolve_shown(ctx, raw, must_exist=True, purpose="reading a file")
    editor = ctx.editor
    source = await read_source(editor, path, shown)
    lines = source.lines
    origin = " (as its buffer open in Neovim has it)" if source.from_buffer else ""
    if not lines:
        if start not in (0,) or end not in (0, -1):
            raise ToolError(f"{shown} is empty, so only the range 0 to -1 can be read.")
        return FunctionOutput(f"{shown}{origin} is empty.", f"Read `{shown}` (empty)", {"lines": 0})
    end = _check_range(start, end, len(lines), shown)
    body = _body(ctx, shown, lines, start, end)
    problems = ""
    if editor is not None and editor.live:  # follow mode shows what the model reads
        editor.follow(str(path), start + 1)
        problems = await diagnostics_now(ctx, path, shown, lines, (start, end))
    header = f"{shown}{origin}: lines {start}-{end} of {len(lines)} (0-based, inclusive)"
    return FunctionOutput(
        f"{header}\n{fence(body, path.suffix.lstrip('.'))}{problems}",
        f"Read `{shown}` (lines {start + 1}-{end + 1} of {len(lines)})",
        {"path": str(path), "start": start, "end": end, "total": len(lines)},
    )


TOOL = function_tool("read_file", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
