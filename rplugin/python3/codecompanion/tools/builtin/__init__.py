"""The builtin tools (one module each, named as the model sees it) and the builtin groups."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

BUILTIN_TOOLS: tuple[str, ...] = (
    "read_file",
    "create_file",
    "insert_edit_into_file",
    "delete_file",
    "file_search",
    "grep_search",
    "get_changed_files",
    "get_diagnostics",
    "run_command",
    "fetch_webpage",
    "web_search",
    "code_runner",
    "skill",
    "agent",
)

FILE_TOOLS: tuple[str, ...] = (
    "read_file",
    "create_file",
    "insert_edit_into_file",
    "delete_file",
    "file_search",
    "grep_search",
)

# Each builtin tool's completion-menu line (`registry.summary` of its description), so the host
# can list the tools without importing them; tests/tools/test_builtin_listing.py keeps it true.
SUMMARIES: Mapping[str, str] = MappingProxyType(
    {
        "code_runner": "Run a short program you wrote and get its exit code, stdout and stderr. "
        "It st...",
        "create_file": "Create a new file with the given content. "
        "Missing parent folders are created....",
        "delete_file": "Delete one regular file in the project (not a folder or a symbolic link). "
        "The...",
        "fetch_webpage": "Fetch a web page (http or https) and return its text; "
        "HTML is converted to Ma...",
        "file_search": "Find files in the project by glob, e.g. `**/*.py`, `src/**/test_*.ts` "
        "or `REA...",
        "get_changed_files": "Show the project's uncommitted git changes: the staged diff, "
        "the unstaged dif...",
        "get_diagnostics": "Get the language server diagnostics (errors, warnings, ...) "
        "Neovim has for a ...",
        "grep_search": "Search the text of the project's files (case-insensitive; "
        ".gitignore respecte...",
        "insert_edit_into_file": "Change an existing file. Each edit replaces oldText with "
        "newText: copy oldTex...",
        "read_file": "Read lines of a text file in the project. Line numbers are 0-based "
        "and the ra...",
        "agent": "Give a task to a subagent: it works on it with its own tools and a fresh cont...",
        "skill": "Read a skill: its instructions (leave `file` null), or one of its other files...",
        "run_command": "Run a shell command (sh -c) in the project root and get its exit code, "
        "stdout...",
        "web_search": "Search the web and get the most relevant pages (title, URL and an extract). "
        "U...",
    }
)

AGENT_SYSTEM_PROMPT = """You are working on a coding task in the user's project on your own, \
using the tools you have been given. Work in small, checked steps until the task is done:

1. Understand first. Find the relevant files with file_search and grep_search, read what you \
need with read_file (in ranges for big files), and look at get_changed_files to see work in \
progress. Do not guess at code you have not read.
2. Plan briefly. Say in a sentence or two what you will change and why before changing it.
3. Change code with insert_edit_into_file, quoting the current text exactly as oldText, with \
enough context to match one place. Use create_file only for new files. Keep edits focused on \
the task and in the style of the surrounding code.
4. Verify. After editing, check get_diagnostics for the files you touched and run the project's \
tests or build with run_command (non-interactive commands only; stdin is closed). If something \
fails, read the output, fix the cause and check again.
5. Finish with a short summary: what you changed, how you verified it, and anything left open.

A tool result that is an error tells you what went wrong: read it and adjust rather than \
repeating the same call. If the user rejects a change, do not try it again; ask or take another \
approach. Ask the user only when a decision really needs them (missing requirements, \
destructive actions). Never delete files or run commands with side effects outside the project \
unless the task requires it."""

GROUPS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "files": MappingProxyType(
            {
                "description": "Read, search, create, edit and delete files in the project",
                "tools": FILE_TOOLS,
                "prompt": "You can use ${tools} to work with the files of this project.",
            }
        ),
        "agent": MappingProxyType(
            {
                "description": "Every builtin tool, for working on a coding task autonomously",
                "tools": BUILTIN_TOOLS,
                "system_prompt": AGENT_SYSTEM_PROMPT,
            }
        ),
    }
)


def load_builtins(
    error: Callable[[str], None],
) -> tuple[list[ModuleType], Mapping[str, Mapping[str, Any]]]:
    """Every builtin tool's module (by name, helpers in `_support/` left out) and the groups;
    a module that fails to import is reported through `error` and left out."""
    modules: list[ModuleType] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        try:
            modules.append(importlib.import_module(f"{__name__}.{info.name}"))
        except Exception as exc:
            error(f"builtin tool {info.name} failed to load: {exc}")
    return modules, GROUPS
