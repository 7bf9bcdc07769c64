"""create_file: a new file (and its folders) in the project, after the user reviewed it."""

from __future__ import annotations

import os
from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_text
from ..model.contract import ToolContext
from ..model.function_tool import Failure, FunctionOutput, function_tool
from ._support.after_write import diagnostics_after
from ._support.paths import describe_path, display_path, project_root, resolve_path
from ._support.review import file_edited, review
from ._support.text_files import create_file, split_lines

DEFAULT_OPTS: dict[str, Any] = {"requires_approval": False, "lists_writes": True}

DESCRIPTION = (
    "Create a new file with the given content. Missing parent folders are created. Fails if "
    "the path already exists: use insert_edit_into_file to change an existing file. The user "
    "may review the new file before it is written."
)

PROPERTIES = {
    "filepath": {
        "type": "string",
        "description": "Path of the new file, relative to the project root.",
    },
    "content": {"type": "string", "description": "The whole content of the new file."},
}


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Create the file unless it exists or the user rejects it."""
    raw = arg_text(args, "filepath")
    content = arg_text(args, "content")
    path = await resolve_path(ctx, raw, must_exist=False, purpose="creating a file", writes=True)
    shown = display_path(project_root(ctx), path)
    if os.path.lexists(path):
        kind = "folder" if path.is_dir() else "file"
        raise ToolError(
            f"{shown} already exists (a {kind}); nothing was written. "
            "Use insert_edit_into_file to change an existing file."
        )
    lines = split_lines(content)
    result = await review(ctx, str(path), [], lines)
    if result.nothing_accepted:
        reason = f' Reason: "{result.reason}".' if result.reason else ""
        raise Failure(
            f"The user rejected creating {shown}; the file was not created.{reason}",
            f"Rejected creating `{shown}`",
        )
    await create_file(path, content, shown)
    file_edited(ctx, path)
    editor = ctx.editor
    if editor is not None and editor.live:  # a buffer open on the name shows the file now
        await editor.reload([str(path)])
        editor.follow(str(path), 1)
    problems = await diagnostics_after(ctx, path, shown, [], lines)
    return FunctionOutput(
        f"Created {shown} ({len(lines)} line{'' if len(lines) == 1 else 's'}).{problems}",
        f"Created `{shown}`",
        {"path": str(path), "lines": len(lines)},
    )


TOOL = function_tool(
    "create_file",
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=lambda ctx, args: f"Create the file `{describe_path(ctx, args.get('filepath'))}`?",
    opts=DEFAULT_OPTS,
)
