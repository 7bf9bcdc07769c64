"""get_diagnostics: the editor's LSP diagnostics for a file, with the lines they point at."""

from __future__ import annotations

import asyncio
from typing import Any

from ...after_edit.diagnostics import DiagnosticsOptions, render
from ...errors import ToolError
from ...ports import Diagnostic
from ..model.arguments import arg_opt_text, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, nullable
from ._support.confined import file_identity
from ._support.paths import display_path, project_root, resolve_path
from ._support.text_files import read_source

SEVERITIES = ("ERROR", "WARNING", "INFORMATION", "HINT")
DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "max_diagnostics": 50,
    # A file not open yet is loaded into a hidden buffer (and wiped after): only this big.
    "max_load_bytes": 5_000_000,
}

DESCRIPTION = (
    "Get the language server diagnostics (errors, warnings, ...) Neovim has for a file, with "
    "the code lines they point at. severity is the least severe level to include."
)

PROPERTIES = {
    "filepath": {
        "type": "string",
        "description": "Path of the file, relative to the project root.",
    },
    "severity": nullable(
        "string",
        "Least severe level to include (default HINT: everything).",
        enum=[*SEVERITIES, None],
    ),
}


def _severity(args: dict[str, Any]) -> str:
    value = arg_opt_text(args, "severity")
    if value is None:
        return "HINT"
    upper = value.upper()
    if upper == "INFO":
        upper = "INFORMATION"
    if upper not in SEVERITIES:
        raise ToolError(f"severity must be one of {', '.join(SEVERITIES)} or null (got {value!r}).")
    return upper


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Ask the editor for the file's diagnostics."""
    raw = arg_text(args, "filepath")
    severity = _severity(args)
    editor = ctx.editor
    if editor is None:
        raise ToolError(
            "Diagnostics come from Neovim's language servers, and no editor is attached to this "
            "session; run the project's linter with run_command instead."
        )
    path = await resolve_path(ctx, raw, must_exist=True, purpose="reading diagnostics for a file")
    shown = display_path(project_root(ctx), path)
    # Neovim opens the file by name, so check the same file is there before and after.
    identity = await asyncio.to_thread(file_identity, path, shown)
    load_cap = int(ctx.opts.get("max_load_bytes") or DEFAULT_OPTS["max_load_bytes"])
    wait = DiagnosticsOptions.from_opts(ctx.chat_opts).wait
    fresh = await editor.diagnostics(str(path), severity, load_cap, wait)
    found = list(fresh.items)
    if await asyncio.to_thread(file_identity, path, shown) != identity:
        raise ToolError(f"{shown} was replaced while its diagnostics were read; try again.")
    try:
        lines = (await read_source(editor, path, shown)).lines
    except ToolError:
        lines = []
    if not found:
        none = "" if fresh.servers else " (no language server is attached to it in Neovim)"
        return FunctionOutput(
            f"No diagnostics at {severity} or worse for {shown}{none}.",
            f"No diagnostics for `{shown}`",
            {"count": 0},
        )
    cap = int(ctx.opts.get("max_diagnostics") or DEFAULT_OPTS["max_diagnostics"])
    ordered = sorted(found, key=lambda d: (SEVERITIES.index(_rank(d)), d.line, d.col))
    body = "\n".join(render(item, lines) for item in ordered[:cap])
    more = f"\n... ({len(found) - cap} more not shown)" if len(found) > cap else ""
    header = f"Diagnostics for {shown} ({len(found)} at {severity} or worse; lines 1-based):"
    return FunctionOutput(
        f"{header}\n{body}{more}",
        f"Got {len(found)} diagnostics for `{shown}`",
        {"count": len(found)},
    )


def _rank(item: Diagnostic) -> str:
    upper = item.severity.upper()
    return upper if upper in SEVERITIES else "HINT"


TOOL = function_tool("get_diagnostics", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
