"""What the language servers say around the file tools and commands: the diagnostics paragraph
a result ends with (after_edit/diagnostics.py) after a write or with a read, the problems a file
had before a write, and the reload of the buffers a command's writes made stale."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from ....after_edit.diagnostics import DiagnosticsOptions, EditedFile, current, report
from ....errors import ToolError
from ....ports import Diagnostic
from ...diffs import hunks
from ...model.contract import ToolContext
from .paths import display_path


async def diagnostics_after(
    ctx: ToolContext,
    path: Path,
    shown: str,
    old: Sequence[str],
    new: Sequence[str],
    before: tuple[Diagnostic, ...] | None = None,
) -> str:
    """The language servers' word on the change of `path` from `old` to `new` ("" when none
    checks it, or it is turned off): a paragraph for the result."""
    if ctx.editor is None or not ctx.editor.live:
        return ""
    options = DiagnosticsOptions.from_opts(ctx.chat_opts)
    if options.level == "off":
        return ""
    changed = await asyncio.to_thread(hunks, list(old), list(new))
    ranges = tuple((h.new_start, max(h.new_end, h.new_start + 1)) for h in changed)
    edited = EditedFile(path, shown, list(new), ranges, before)
    text = await report(ctx.editor, [edited], options)
    return f"\n{text}" if text else ""


async def diagnostics_before(ctx: ToolContext, path: Path) -> tuple[Diagnostic, ...] | None:
    """The servers' problems in a file no buffer holds, just before a tool writes it, so that
    its result can tell new problems from old ones and name those it fixed (None when the loop
    is off or nothing checks the file)."""
    if ctx.editor is None or not ctx.editor.live:
        return None
    options = DiagnosticsOptions.from_opts(ctx.chat_opts)
    if options.level == "off":
        return None
    try:
        found = await ctx.editor.diagnostics(
            str(path), options.min_severity, options.max_load_bytes, options.wait
        )
    except ToolError:
        return None
    return found.items if found.servers else None


async def diagnostics_now(
    ctx: ToolContext, path: Path, shown: str, lines: Sequence[str], span: tuple[int, int]
) -> str:
    """The servers' problems in a file the model reads, on the lines it reads (0-based,
    inclusive `span`): a paragraph for the result ("" when the loop is off or nothing checks
    the file)."""
    if ctx.editor is None or not ctx.editor.live:
        return ""
    options = DiagnosticsOptions.from_opts(ctx.chat_opts)
    # No round trip for a read that no server could answer (twenty reads in a round would be
    # twenty files loaded in Neovim and dropped again).
    if options.level == "off" or not ctx.editor.may_check(str(path)):
        return ""
    text = await current(ctx.editor, EditedFile(path, shown, lines), span, options)
    return f"\n{text}" if text else ""


async def after_command(ctx: ToolContext, root: Path) -> str:
    """What a command changed in the files open in Neovim: their buffers reloaded (unless they
    hold unsaved changes, which the model is told) and the servers' word on them."""
    editor = ctx.editor
    if editor is None:
        return ""
    loaded = await editor.loaded_under(str(root))
    synced = await editor.reload(loaded) if loaded else None
    if synced is None:
        return ""
    notes = [
        f"\nnote: {display_path(root, Path(p))} changed on disk, but its buffer in Neovim has "
        "unsaved changes, so the buffer was not reloaded."
        for p in synced.kept
    ]
    for name in synced.reloaded:
        path, shown = Path(name), display_path(root, Path(name))
        lines = await editor.buffer_lines(name) or []
        notes.append(
            await diagnostics_after(ctx, path, shown, lines, lines, synced.before.get(name))
        )
    return "".join(notes)
