"""The project's files as the search tools see them: gitignore respected, `.git` skipped, globs."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import bracex

from ...runtime.child_env import EnvPolicy
from .linear_regex import LinearPattern, RegexError, compile_linear
from .safe_git import run_git

MAX_FILES = 200_000
GIT_TIMEOUT = 30.0


def _git_listing(output: str, root: Path) -> list[str]:
    """Paths from `git ls-files -z`, without deleted files, `.git` or duplicates."""
    seen: set[str] = set()
    files: list[str] = []
    for name in output.split("\0"):
        if not name or name in seen or ".git" in name.split("/"):
            continue
        seen.add(name)
        if os.path.isfile(root / name):
            files.append(name)
    return files[:MAX_FILES]


def _walk(root: Path, hidden: bool) -> list[str]:
    """Every file below `root`, skipping `.git` (and, unless `hidden`, hidden files and folders)."""
    files: list[str] = []
    # fwalk enters each folder by descriptor, so a folder swapped for a link is not followed.
    for folder, dirs, names, _fd in os.fwalk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git" and (hidden or not d.startswith(".")))
        relative = os.path.relpath(folder, root)
        for name in sorted(names):
            if not hidden and name.startswith("."):
                continue
            files.append(name if relative == "." else f"{relative}/{name}".replace(os.sep, "/"))
            if len(files) >= MAX_FILES:
                return files
    return files


def _visible(name: str) -> bool:
    return not any(part.startswith(".") for part in name.split("/"))


async def project_files(root: Path, *, hidden: bool = True) -> list[str]:
    """Relative paths of the project's files, never inside `.git`.

    In a git repository: tracked and untracked files that .gitignore does not exclude; elsewhere
    a walk of the folder. `hidden` False also leaves out dot-files and dot-folders (as rg does).
    """
    listing = await run_git(
        root,
        ("ls-files", "--cached", "--others", "--exclude-standard", "-z"),
        timeout=GIT_TIMEOUT,
        env=EnvPolicy().environment(),
        max_output=64_000_000,
    )
    if listing.exit_code == 0 and not listing.truncated:
        files = await asyncio.to_thread(_git_listing, listing.stdout, root)
        return files if hidden else [name for name in files if _visible(name)]
    return await asyncio.to_thread(_walk, root, hidden)


BRACE_LIMIT = 1000  # patterns one glob's braces may expand to


def _class(pattern: str, start: int) -> tuple[str, int]:
    """The regex of a `[...]` class starting at `start`, and the index after it."""
    end = pattern.find("]", start + 2)
    if end == -1:
        return re.escape("["), start + 1
    body = pattern[start + 1 : end].replace("\\", "\\\\")
    if body.startswith("!"):
        return "[^" + body[1:] + "]", end + 1
    return "[" + body + "]", end + 1


def _translate(pattern: str) -> str:
    """A brace-free glob as a regular expression: `**` as a whole segment crosses folders,
    `*` and `?` do not, `[!a]` negates."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        at_segment = i == 0 or pattern[i - 1] == "/"
        if at_segment and pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif at_segment and pattern[i:] == "**":
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            while i < len(pattern) and pattern[i] == "*":
                i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            part, i = _class(pattern, i)
            out.append(part)
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out) + "/*"


def compile_glob(pattern: str) -> LinearPattern | None:
    """A matcher for a glob, as in .gitignore: without a `/` it matches the file name anywhere.

    `{a,{b,c}}` picks (nested too; an unclosed brace is literal), dot files match like others,
    case-insensitive. Matching runs in linear time (RE2) whatever the glob: `**?**?**~` or
    `**/a/**/a/**/b` against a deep path cannot stall the search. None for an empty pattern;
    ValueError (RegexError) for a broken one.
    """
    text = pattern.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text:
        return None
    if text.endswith("/"):
        text += "**"
    if "/" not in text.rstrip("/"):
        text = "**/" + text
    text = text.lstrip("/")
    try:
        expanded = bracex.expand(text, limit=BRACE_LIMIT)
    except bracex.ExpansionLimitException:
        raise RegexError(f"its braces expand to more than {BRACE_LIMIT} patterns") from None
    alternatives = "|".join(f"(?:{_translate(one)})" for one in dict.fromkeys(expanded))
    return compile_linear(alternatives, ignore_case=True, dot_all=True)


def glob_filter(pattern: str | None, files: list[str]) -> list[str]:
    """The files whose relative path matches `pattern` (all of them for None or "")."""
    matcher = compile_glob(pattern) if pattern else None
    if matcher is None:
        return files
    return [name for name in files if matcher.fullmatch(name)]
