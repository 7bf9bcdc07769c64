"""delete_file: remove one regular file in the project, with the user's approval for that path."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool
from ._support.confined import is_read_only, open_folder
from ._support.paths import describe_path, display_path, lexical_path, project_root, resolve_path
from ._support.review import file_edited


def approval_key(args: dict[str, Any]) -> str:
    """What an "always" approval remembers: the path exactly as given."""
    return str(args.get("filepath"))


DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": True,
    "lists_writes": True,  # each file it removes is told to the checkpoints
    "require_cmd_approval": True,
    "allowed_in_yolo_mode": False,
    "approval_key": approval_key,
}

DESCRIPTION = (
    "Delete one regular file in the project (not a folder or a symbolic link). The user is "
    "asked to approve each path."
)

PROPERTIES = {
    "filepath": {
        "type": "string",
        "description": "Path of the file to delete, relative to the project root.",
    },
}


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Delete the file if it is a regular file."""
    raw = arg_text(args, "filepath")
    root = project_root(ctx)
    if lexical_path(root, raw).is_symlink():
        raise ToolError(f"{raw} is a symbolic link; delete_file only deletes regular files.")
    path = await resolve_path(ctx, raw, must_exist=True, purpose="deleting a file", writes=True)
    shown = display_path(root, path)
    await asyncio.to_thread(_delete, path, shown)
    file_edited(ctx, path)
    return FunctionOutput(f"Deleted {shown}.", f"Deleted `{shown}`", {"path": str(path)})


def _delete(path: Path, shown: str) -> None:
    """Unlink the regular file at `path`, reached without following a link on the way."""
    folder = open_folder(path.parent, shown)
    try:
        try:
            info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            raise ToolError(f"No such file or directory: {shown}") from None
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{shown} is a folder; delete_file only deletes regular files.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown} is not a regular file; it was not deleted.")
        if is_read_only(info):
            raise ToolError(f"{shown} is read-only; it was not deleted.")
        os.unlink(path.name, dir_fd=folder)
    except PermissionError:
        raise ToolError(f"Permission denied deleting {shown}.") from None
    finally:
        os.close(folder)


def _question(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Delete the file `{describe_path(ctx, args.get('filepath'))}`?"


TOOL = function_tool(
    "delete_file",
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=_question,
    opts=DEFAULT_OPTS,
)
