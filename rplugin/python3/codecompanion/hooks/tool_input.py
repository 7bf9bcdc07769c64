"""A call's arguments as Claude Code's hooks read and write them: our tools' arguments plus the
names its tools use (`command` for `cmd`, an absolute `file_path` for `filepath`), and back."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..outside import Json

# Claude Code's name of an argument → ours.
ALIASES = (("command", "cmd"), ("file_path", "filepath"))


def hook_input(args: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """`tool_input` for a hook: the arguments, also under Claude Code's names."""
    tool_input = dict(args)
    if isinstance(args.get("cmd"), str):
        tool_input.setdefault("command", args["cmd"])
    path = args.get("filepath")
    if isinstance(path, str) and path.strip():
        full = os.path.join(str(cwd), os.path.expanduser(path.strip()))
        tool_input.setdefault("file_path", os.path.normpath(full))
    return tool_input


def from_hook(args: Mapping[str, Any], given: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """The arguments a hook's `updatedInput` means: what it gives replaces the call's own
    (others are kept), a changed `command` or `file_path` is the tool's `cmd` or `filepath`,
    and those names are dropped where they were only the hook's."""
    sent = hook_input(args, cwd)
    aliases = {alias: name for alias, name in ALIASES if alias in sent and alias not in args}
    new = {**args, **{key: value for key, value in given.items() if key not in aliases}}
    for alias, name in aliases.items():
        if alias in given and given[alias] != sent[alias]:
            new[name] = _ours(name, given[alias], cwd)
    return new


def _ours(name: str, value: Json, cwd: Path) -> Json:
    """A value under Claude Code's name as our argument: a path in the project relative."""
    if name != "filepath" or not isinstance(value, str) or not os.path.isabs(value):
        return value
    relative = os.path.relpath(os.path.normpath(value), cwd)
    return value if relative == ".." or relative.startswith("../") else relative
