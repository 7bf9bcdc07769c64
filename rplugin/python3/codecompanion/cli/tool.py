"""`python -m codecompanion tool NAME --args JSON`: run one tool outside Neovim, print its result.

The tool system is built as a chat's is (Workspace.tool_system): the same config file Neovim
reads (`--config`, else `$CODECOMPANION_CONFIG`, else `stdpath("config")/codecompanion.py`; its
path is said on stderr), the same tools, validation, approvals, timeouts, and the same
environment for tool processes, without any key an adapter reads. The result is printed as one
JSON object on stdout; questions and notices go to stderr so stdout stays JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import config_file_path
from ..errors import ToolError
from ..messages import ToolCall, ToolResult
from ..ports import (
    ApprovalDecision,
    ApprovalRequest,
    BufferEdited,
    FreshDiagnostics,
    HunkDecision,
    Reloaded,
    UnsavedChoice,
)
from ..tools.diffs import hunks, unified
from ..tools.runtime.system import ToolSystem
from ..workspace import HostOptions, Workspace

_CALL_ID = "cli-1"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `tool` subcommand."""
    parser = subparsers.add_parser("tool", help="run one tool and print its result as JSON")
    parser.add_argument("name", help="the tool's name (a builtin or one from the config file)")
    parser.add_argument("--args", default="{}", help="the arguments as a JSON object")
    parser.add_argument("--cwd", default=".", help="the project root (default: .)")
    parser.add_argument(
        "--config",
        default=None,
        help="the Python config file (default: the one Neovim reads)",
    )
    parser.add_argument("--yes", action="store_true", help="approve every approval question")
    parser.set_defaults(handler=run)


@dataclass
class CliChat:
    """The chat of one command-line call: keeps its result and the messages the tool adds."""

    id: str = "cli"
    results: list[ToolResult] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the result."""
        self.results.append(result)

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Statuses are not shown on the command line."""

    def add_tool_message(self, role: str, content: str, visible: bool) -> None:
        """Keep a message the tool added (printed with the result)."""
        self.messages.append({"role": role, "content": content, "visible": visible})


class TerminalApprover:
    """Asks y/n on the terminal; `--yes` approves everything; without a terminal it rejects."""

    def __init__(self, assume_yes: bool, stdin: TextIO, stderr: TextIO) -> None:
        self.assume_yes = assume_yes
        self.stdin = stdin
        self.stderr = stderr

    async def answer(self, question: str) -> str | None:
        """The line typed at `question` (lower case), or None without a terminal."""
        if not self.stdin.isatty():
            return None
        self.stderr.write(question)
        self.stderr.flush()
        line = await asyncio.to_thread(self.stdin.readline)
        return line.strip().lower()

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """y/yes approves, anything else rejects."""
        if self.assume_yes:
            return ApprovalDecision("approve")
        answer = await self.answer(f"{request.prompt} [y/N] ")
        if answer is None:
            return ApprovalDecision("reject", reason="no terminal to ask for approval (use --yes)")
        if answer in ("y", "yes"):
            return ApprovalDecision("approve")
        return ApprovalDecision("reject")

    async def confirm(self, chat_id: str, question: str) -> bool:
        """A yes/no question."""
        if self.assume_yes:
            return True
        answer = await self.answer(f"{question} [y/N] ")
        return answer in ("y", "yes")


class TerminalEditor:
    """The command line's editor: no buffers and no language servers; a file change is shown
    as a unified diff on stderr and asked about with [y/N] (all of it or none), as a command
    is; `--yes` writes it, and without a terminal it is not written."""

    live = False

    def __init__(self, approver: TerminalApprover) -> None:
        self.approver = approver

    async def buffer_lines(self, path: str) -> list[str] | None:
        """No buffers: files are read from disk."""
        return None

    def may_check(self, path: str) -> bool:
        """No language servers."""
        return False

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        """No buffers: files are written to disk."""
        return False

    async def buffer_modified(self, path: str) -> bool | None:
        """No buffers."""
        return None

    async def write_buffer(
        self, chat_id: str, path: str, expected: list[str], lines: list[str], save: bool
    ) -> BufferEdited:
        """No buffers: files are written to disk."""
        return BufferEdited("closed")

    async def ask_unsaved(self, chat_id: str, path: str) -> UnsavedChoice:
        """No buffers hold unsaved changes here."""
        return "reject"

    async def reload(self, paths: list[str]) -> Reloaded:
        """No buffers to reload."""
        return Reloaded()

    async def loaded_under(self, root: str) -> list[str]:
        """No buffers."""
        return []

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        """No language servers on the command line."""
        raise ToolError(
            "Diagnostics come from Neovim's language servers, and no editor is attached to this "
            "session; run the project's linter with run_command instead."
        )

    def follow(self, path: str, line: int | None = None) -> None:
        """No windows to follow in."""

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision:
        """Every hunk when the user says yes, none otherwise."""
        every = tuple(range(len(hunks(old, new))))
        if self.approver.assume_yes:
            return HunkDecision(every)
        diff, _rows = unified(path, old, new)
        head = f"{note}\n" if note else ""
        answer = await self.approver.answer(f"{head}{diff}\nWrite this change to {path}? [y/N] ")
        if answer in ("y", "yes"):
            return HunkDecision(every)
        reason = "no terminal to ask for approval (use --yes)" if answer is None else None
        return HunkDecision((), every, reason)


class NoEvents:
    """Events go nowhere on the command line."""

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Drop the event."""


def _call(name: str, text: str) -> ToolCall:
    """The call, with the arguments as given: malformed JSON goes through repair as in a chat."""
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # nested too deep is malformed too
        return ToolCall(_CALL_ID, name, {}, text)
    if not isinstance(decoded, dict):
        return ToolCall(_CALL_ID, name, {}, text)
    return ToolCall(_CALL_ID, name, decoded)


def build(args: argparse.Namespace, stdin: TextIO, stderr: TextIO) -> tuple[ToolSystem, CliChat]:
    """The chat's tool system as Neovim builds it, from the config file Neovim reads."""
    path = config_file_path(os.environ, args.config)
    workspace = Workspace(HostOptions(config_file=path))  # the command line saves no chat
    found = "" if os.path.isfile(path) else " (not found: the defaults)"
    stderr.write(f"config: {path}{found}\n")
    if workspace.config.error:
        stderr.write(f"config: {workspace.config.error}\n")
    for problem in workspace.plugins.errors:
        stderr.write(f"{problem}\n")
    workspace.registry.names()  # loads the tools now, so their problems are said before the call
    for problem in workspace.registry.errors:
        stderr.write(f"config: {problem}\n")
    chat = CliChat()
    approver = TerminalApprover(args.yes, stdin, stderr)
    system = workspace.tool_system(
        chat,
        approver=approver,
        events=NoEvents(),
        cwd=Path(args.cwd),
        overrides={"auto_submit": False, "default_tools": []},
        editor=TerminalEditor(approver),
        checks=False,  # one call, not a chat's rounds
    )
    return system, chat


async def _run_tool(system: ToolSystem, chat: CliChat, args: argparse.Namespace) -> dict[str, Any]:
    if not system.add_tool(args.name):
        known = ", ".join(system.registry.names()) or "none"
        message = f"There is no enabled tool named {args.name!r}. Known tools: {known}."
        return {"status": "error", "for_llm": message, "for_user": None}
    outcome = await system.run([_call(args.name, args.args)])
    result = chat.results[0]
    status = outcome.statuses.get(_CALL_ID, "error")
    printed = {"status": status, "for_llm": result.for_llm, "for_user": result.for_user}
    return {**printed, "messages": chat.messages} if chat.messages else printed


def run(args: argparse.Namespace) -> int:
    """Run the tool and print `{"status", "for_llm", "for_user"}`; 0 on success, else 1."""
    if not Path(args.cwd).is_dir():
        message = f"There is no directory {args.cwd}."
        print(json.dumps({"status": "error", "for_llm": message, "for_user": None}))
        return 1
    try:
        system, chat = build(args, sys.stdin, sys.stderr)
        result = asyncio.run(_run_tool(system, chat, args))
    except Exception as exc:  # whatever the input, stdout gets one JSON object
        message = f"The tool could not run: {type(exc).__name__}: {exc}"[:500]
        result = {"status": "error", "for_llm": message, "for_user": None}
    _print(result)
    return 0 if result["status"] == "success" else 1


def _print(result: dict[str, Any]) -> None:
    """One JSON line; escaped when the text cannot be written as it is (half characters from
    undecodable arguments, a terminal that is not UTF-8)."""
    try:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    except UnicodeEncodeError:
        sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
