"""insert_edit_into_file: replace quoted text in a file, append to it, or overwrite it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ...errors import ToolError
from ..diffs import unified
from ..model.arguments import arg_opt_text, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import Failure, FunctionOutput, function_tool, one_line
from ._support.after_write import diagnostics_after, diagnostics_before
from ._support.edits import Applied, Edit, apply_edits, parse_edits
from ._support.paths import describe_path, display_path, project_root, resolve_path
from ._support.review import Review, file_edited, first_changed_line, rejection_note, review
from ._support.text_files import (
    FileText,
    Written,
    fence,
    read_source,
    split_lines,
    with_trailing_newline,
    write_edit,
)

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "max_diff_lines": 60,
    "lists_writes": True,  # each file it writes is told to the checkpoints
}
MODES = ("append", "overwrite")
BIG_TEXT = 200_000  # characters; matching and diffing bigger files runs in a thread
T = TypeVar("T")

DESCRIPTION = (
    "Change an existing file. Each edit replaces oldText with newText: copy oldText exactly "
    "from the current file (indentation included) with enough lines to match one place only; "
    "set replaceAll to true to change every occurrence. Edits apply in order and all-or-nothing "
    '(if one fails, nothing is written). oldText "^" inserts newText at the start of the file '
    'and "$" at its end. mode "append" (the default; null works too) applies the edits; '
    '"overwrite" replaces the whole file with edits[0].newText. The user may review the change '
    "and reject parts of it."
)

_EDIT_ITEM = {
    "type": "object",
    "properties": {
        "oldText": {"type": "string", "description": "Exact current text to replace."},
        "newText": {"type": "string", "description": "The text that replaces it."},
        "replaceAll": {
            "type": ["boolean", "null"],
            "description": "true to replace every occurrence; null or false for exactly one.",
        },
    },
    "required": ["oldText", "newText", "replaceAll"],
    "additionalProperties": False,
}

PROPERTIES = {
    "filepath": {
        "type": "string",
        "description": "Path of the file, relative to the project root.",
    },
    "edits": {
        "anyOf": [
            {"type": "array", "items": _EDIT_ITEM, "minItems": 1},
            {"type": "string", "description": "The same list as JSON text."},
        ],
        "description": "The edits, applied in order.",
    },
    "explanation": {"type": ["string", "null"], "description": "One short sentence for the user."},
    "mode": {
        "type": ["string", "null"],
        "enum": [*MODES, None],
        "description": '"append" (default) applies the edits; "overwrite" replaces the file.',
    },
}


def _mode(args: dict[str, Any]) -> str | None:
    mode = arg_opt_text(args, "mode")
    # "append" is CodeCompanion's default mode: apply the edits (it does not mean "add at end").
    if mode in (None, "", "append", "edit", "replace"):
        return None
    if mode not in MODES:
        raise ToolError(f'mode must be null, "append" or "overwrite" (got {mode!r}).')
    return mode


def _changed_text(
    mode: str | None, edits: list[Edit], text: str
) -> tuple[str, tuple[Applied, ...]]:
    """The file's new text and how each edit was placed (none: the file was overwritten)."""
    if mode == "overwrite" and not _names_a_part(edits, text):
        return edits[0].new_text, ()
    result = apply_edits(text, edits)
    return result.content, result.applied


def _names_a_part(edits: list[Edit], text: str) -> bool:
    """Whether an overwrite's first edit names a part of the file as its old text: then the
    model meant that part changed (small models set "overwrite" for one-line edits, which
    would leave the file holding only the new line), so its edits are applied instead."""
    old = edits[0].old_text
    return bool(old.strip()) and old in text and old.strip() != text.strip()


def _final_text(new: str, outcome: Review) -> str:
    """The text to store: `new` itself, or the accepted lines when hunks were rejected."""
    if not outcome.rejected:
        return new
    return "\n".join(outcome.lines) + ("\n" if outcome.lines and new.endswith("\n") else "")


def _report(
    ctx: ToolContext,
    mode: str | None,
    shown: str,
    written: Written,
    applied: tuple[Applied, ...],
    diff: tuple[str, str],
) -> str:
    """The model's text: where it was written, how each edit matched, and a diff when useful."""
    verb = "Overwrote" if mode == "overwrite" and not applied else "Edited"
    lines = [f"{verb} {shown} {written.place}."]
    if mode == "overwrite" and applied:
        lines.append(
            'mode "overwrite" was read as null: oldText is a part of the file, so the edits were '
            "applied (an overwrite would have left only newText)."
        )
    lines += [f"- {item.describe()}" for item in applied]
    note, text = diff
    if note:
        lines.append(note)
    loose = any(item.strategy != "exact" for item in applied)
    if text and (note or loose):
        cap = int(ctx.opts.get("max_diff_lines", DEFAULT_OPTS["max_diff_lines"]))
        rows = text.splitlines()
        cut = f"\n({len(rows) - cap} more diff lines)" if len(rows) > cap else ""
        lines.append("Applied diff:\n" + fence("\n".join(rows[:cap]), "diff") + cut)
    return "\n".join(lines)


async def _off_loop(text: str, fn: Callable[..., T], *args: Any) -> T:
    """Run CPU work for a big file in a worker thread so the editor never waits on it."""
    if len(text) > BIG_TEXT:
        return await asyncio.to_thread(fn, *args)
    return fn(*args)


async def _load(ctx: ToolContext, args: dict[str, Any]) -> tuple[FileText, str]:
    raw = arg_text(args, "filepath")
    path = await resolve_path(ctx, raw, must_exist=True, purpose="editing a file", writes=True)
    shown = display_path(project_root(ctx), path)
    return await read_source(ctx.editor, path, shown), shown


async def _reviewed(
    ctx: ToolContext, args: dict[str, Any]
) -> tuple[FileText, str, str, Any, Review]:
    """Read, edit and review; when the text changes while the review is open (the user typed
    in the file, or opened it), the edits are made again on what is there now and the user is
    asked again, so what is written never overwrites what they typed."""
    mode = _mode(args)
    edits = parse_edits(args.get("edits"), need_old=mode is None)
    note: str | None = None
    for _attempt in range(MAX_REVIEWS):
        try:
            source, shown = await _load(ctx, args)
            new, applied = await _off_loop(source.text, _changed_text, mode, edits, source.text)
        except ToolError as exc:
            if note is None:
                raise
            raise ToolError(
                f"The file changed during the review and the edits no longer apply ({exc}); "
                "nothing was written. Read the file again."
            ) from None
        new = with_trailing_newline(new, source.text)
        if new == source.text:
            raise ToolError(f"The edits leave {shown} unchanged; nothing was written.")
        outcome = await review(ctx, str(source.path), source.lines, split_lines(new), note)
        if not outcome.reviewed or await _unchanged(ctx, source, shown):
            return source, shown, new, applied, outcome
        note = f"{shown} changed while you reviewed: this is the change to what is there now."
    raise ToolError(
        f"{shown} kept changing during the review ({MAX_REVIEWS} times); nothing was written."
    )


async def _unchanged(ctx: ToolContext, source: FileText, shown: str) -> bool:
    """Whether the file still reads as it did before the review (and from the same place)."""
    try:
        now = await read_source(ctx.editor, source.path, shown)
    except ToolError:  # deleted or unreadable now: the next read says what happened
        return False
    return now.text == source.text and now.from_buffer == source.from_buffer


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Apply the edits (atomically), after the user's review when due."""
    explanation = arg_opt_text(args, "explanation") or ""
    source, shown, new, applied, outcome = await _reviewed(ctx, args)
    old_lines = source.lines
    if outcome.nothing_accepted:
        reason = f' Reason: "{outcome.reason}".' if outcome.reason else ""
        raise Failure(
            f"The user rejected the changes to {shown}; nothing was written.{reason}",
            f"Rejected edits to `{shown}`",
        )
    final = _final_text(new, outcome)
    editor = ctx.editor
    known = None  # an open buffer's problems before the edit come with its write
    if editor is not None and editor.live and not source.from_buffer:
        known = await diagnostics_before(ctx, source.path)
    written = await write_edit(ctx, source, final, shown)
    new_lines = split_lines(final)
    first = first_changed_line(old_lines, new_lines)
    file_edited(ctx, source.path, first, on_disk=written.where != "buffer")
    if editor is not None and editor.live:  # follow mode shows the change
        editor.follow(str(source.path), first)
    diff_text, _rows = await _off_loop(final, unified, shown, old_lines, new_lines)
    note = rejection_note(outcome)
    for_llm = _report(ctx, _mode(args), shown, written, applied, (note, diff_text))
    if editor is not None and editor.live:  # what the language servers say of it
        for_llm += await diagnostics_after(
            ctx,
            source.path,
            shown,
            old_lines,
            new_lines,
            written.before if source.from_buffer else known,
        )
    user = f"Edited `{shown}`" + (f": {one_line(explanation, 80)}" if explanation else "")
    return FunctionOutput(for_llm, user, {"path": str(source.path), "written_to": written.where})


MAX_REVIEWS = 3  # a file that changes under every review is refused after this many


def _prompt(ctx: ToolContext, args: dict[str, Any]) -> str:
    mode = args.get("mode")
    shown = describe_path(ctx, args.get("filepath"))
    if mode == "overwrite":
        return f"Overwrite `{shown}`?"
    edits = args.get("edits")
    count = len(edits) if isinstance(edits, list) else 1
    return f"Apply {count} edit{'' if count == 1 else 's'} to `{shown}`?"


TOOL = function_tool(
    "insert_edit_into_file", DESCRIPTION, PROPERTIES, run, prompt=_prompt, opts=DEFAULT_OPTS
)
