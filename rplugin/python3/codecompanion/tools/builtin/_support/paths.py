"""Path confinement: every path a tool touches is resolved against the project root."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from ....errors import ToolError
from ...model.contract import QuestionKind

_FORBIDDEN = {"\x00": "a NUL byte", "\n": "a newline", "\r": "a carriage return"}


def clean_path_text(raw: object) -> str:
    """The path text the model sent, checked: a non-empty string without NUL bytes or newlines."""
    if not isinstance(raw, str):
        raise ToolError(f"The path must be a string, not {type(raw).__name__}.")
    text = raw.strip()
    if not text:
        raise ToolError("The path is empty.")
    for char, name in _FORBIDDEN.items():
        if char in text:
            raise ToolError(f"The path {text!r} contains {name}; paths cannot contain one.")
    return text


class PathScope(Protocol):
    """What resolving a path needs of a call (its ToolContext): the project root and a way to
    ask."""

    @property
    def root(self) -> Path:
        """The project root, as the chat opened it."""
        ...

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """The user's yes or no (False when nobody can be asked)."""
        ...


def project_root(scope: PathScope) -> Path:
    """The project root, fully resolved."""
    return Path(os.path.realpath(os.fspath(scope.root)))


def lexical_path(root: Path, raw: str) -> Path:
    """`raw` made absolute (`~` expanded, relative to `root`) and normalised, symlinks kept."""
    expanded = os.path.expanduser(clean_path_text(raw))
    joined = os.path.join(os.fspath(root), expanded)
    return Path(os.path.normpath(joined))


def real_path(root: Path, raw: str) -> Path:
    """`raw` made absolute and resolved: `..`, `~` and every symlink (existing parts only)."""
    expanded = os.path.expanduser(clean_path_text(raw))
    return Path(os.path.realpath(os.path.join(os.fspath(root), expanded)))


def is_inside(root: Path, path: Path) -> bool:
    """True if the resolved `path` is `root` or below it."""
    return path == root or root in path.parents


def display_path(root: Path, path: Path) -> str:
    """`path` relative to `root` when inside it, else absolute; for messages."""
    if is_inside(root, path) and path != root:
        return path.relative_to(root).as_posix()
    return str(path)


async def _refused_git_control(
    scope: PathScope, root: Path, path: Path, lexical: Path, purpose: str
) -> bool:
    """True if the path is git's control file (or in the repository's hooks folder) and the
    user said no when asked."""
    from .safe_git import controls_git, hooks_folder, in_git_folder

    if not (
        controls_git(root, path) or controls_git(root, lexical) or in_git_folder(scope, root, path)
    ):
        hooks = await hooks_folder(root) if is_inside(root, path) else None
        if hooks is None or not (path == hooks or hooks in path.parents):
            return False
    question = (
        f"Allow {purpose} in git's control files: {display_path(root, path)}? "
        "Git runs programs named there (hooks, filters)."
    )
    return not await scope.confirm(question, "git_control")


def describe_path(scope: PathScope, raw: object) -> str:
    """The path argument as the user should see it (relative when inside the project)."""
    if not isinstance(raw, str):
        return str(raw)
    try:
        root = project_root(scope)
        return display_path(root, real_path(root, raw))
    except (ToolError, TypeError, AttributeError):
        return raw


async def resolve_path(
    scope: PathScope, raw: str, *, must_exist: bool, purpose: str, writes: bool = False
) -> Path:
    """The resolved path for `raw`; outside the project only if the user allows that exact path.

    With `writes`, a path in a `.git` folder or a .gitattributes/.gitmodules file is asked about
    too, YOLO or not: git runs the programs those files name.
    Raises ToolError for a bad path, a refused outside path, or (with `must_exist`) a missing one.
    """
    _root, path = await resolve_in_project(
        scope, raw, must_exist=must_exist, purpose=purpose, writes=writes
    )
    return path


async def resolve_shown(
    scope: PathScope, raw: str, *, must_exist: bool, purpose: str
) -> tuple[Path, str]:
    """`resolve_path`'s path and how messages show it, from one resolution of the project root."""
    root, path = await resolve_in_project(scope, raw, must_exist=must_exist, purpose=purpose)
    return path, display_path(root, path)


async def resolve_in_project(
    scope: PathScope, raw: str, *, must_exist: bool, purpose: str, writes: bool = False
) -> tuple[Path, Path]:
    """The resolved project root and the path checked as `resolve_path` says."""
    root = project_root(scope)
    path = real_path(root, raw)
    if writes and await _refused_git_control(scope, root, path, lexical_path(root, raw), purpose):
        raise ToolError(
            f"{display_path(root, path)} is one of git's control files (.git/, .gitattributes, "
            f".gitmodules) and the user did not allow {purpose} there."
        )
    if not is_inside(root, path):
        question = f"Allow {purpose} outside the project: {path}?"
        allowed = await scope.confirm(question, "outside_project")
        if not allowed:
            raise ToolError(
                f"{path} is outside the project ({root}) and the user did not allow {purpose} "
                "there. Use a path inside the project."
            )
    if must_exist and not os.path.lexists(path):
        raise ToolError(f"No such file or directory: {display_path(root, path)}")
    return root, path
