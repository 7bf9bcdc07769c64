"""Which hooks run on which event: the `hooks` setting, in Claude Code's shape.

    hooks = {"PreToolUse": [{"matcher": "Bash|run_command",
                             "hooks": [{"type": "command", "command": "...", "timeout": 5}]}]}

A hook is a command (run with the event as JSON on stdin) or, in the Python config file, a
function taking the event's dict. A matcher is a regular expression the whole tool name must
match (`*` or none: every tool); it is tried against our tool names and the names Claude Code
gives the same tools (`Bash` is `run_command`), so a matcher written for Claude Code matches.
The same table is read from `.claude/settings.json` (and its `.local` twin and the user's
`~/.claude/settings.json`) when the config file turns that on: commands only, there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "PreCompact", "SessionStart")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0
# Our builtins under the names Claude Code gives the tools that do the same.
CLAUDE_NAMES: Mapping[str, str] = {
    "run_command": "Bash",
    "read_file": "Read",
    "create_file": "Write",
    "insert_edit_into_file": "Edit",
    "delete_file": "Delete",
    "grep_search": "Grep",
    "file_search": "Glob",
    "fetch_webpage": "WebFetch",
    "web_search": "WebSearch",
    "agent": "Task",
    "skill": "Skill",
}
SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")


def claude_name(name: str, opts: Mapping[str, Any]) -> str:
    """The name Claude Code gives the tool `name` (with these options): its builtins' names,
    `mcp__<server>__<tool>` for an MCP server's tool, else ours."""
    server, tool = opts.get("mcp_server"), opts.get("mcp_tool")
    if isinstance(server, str) and isinstance(tool, str):
        return f"mcp__{server}__{tool}"
    return CLAUDE_NAMES.get(name, name)


USER_SETTINGS = "~/.claude/settings.json"


@dataclass(frozen=True)
class CommandHook:
    """A shell command run with the event as JSON on its stdin."""

    command: str
    timeout: float = DEFAULT_TIMEOUT
    source: str = "config"

    @property
    def label(self) -> str:
        """How a line about this hook names it."""
        first = self.command.strip().splitlines()[0] if self.command.strip() else ""
        return f"`{first[:60]}`"

    @property
    def from_project(self) -> bool:
        """True for a hook of the project's own settings files (the repository wrote it)."""
        return self.source in SETTINGS_FILES


@dataclass(frozen=True)
class CallableHook:
    """A Python function of the config file, given the event's dict."""

    function: Callable[..., Any]
    timeout: float = DEFAULT_TIMEOUT

    @property
    def label(self) -> str:
        """How a line about this hook names it."""
        return f"{getattr(self.function, '__name__', 'hook')}()"


Hook = CommandHook | CallableHook


@dataclass(frozen=True)
class Matcher:
    """The hooks of one event that run when the subject (a tool's name) matches."""

    pattern: str
    hooks: tuple[Hook, ...]

    def matches(self, subject: str | None, claude: str | None = None) -> bool:
        """True for every subject when the pattern is empty or `*`; else a full match of our
        name or Claude Code's name for the tool (`claude`, else its builtin's name)."""
        if self.pattern in ("", "*") or subject is None:
            return True
        names = [subject, claude or CLAUDE_NAMES.get(subject, subject)]
        try:
            return any(re.fullmatch(self.pattern, name) for name in names)
        except re.error:
            return self.pattern in names


@dataclass
class HookTable:
    """Every event's matchers, and one line per entry that could not be read."""

    events: dict[str, list[Matcher]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def hooks(
        self, event: str, subject: str | None = None, claude: str | None = None
    ) -> list[Hook]:
        """The hooks to run for `event` on `subject` (Claude Code's name for it: `claude`), in
        the order they were configured."""
        matchers = self.events.get(event, [])
        return [h for m in matchers if m.matches(subject, claude) for h in m.hooks]

    def count(self) -> int:
        """How many hooks there are, over every event."""
        return sum(len(m.hooks) for matchers in self.events.values() for m in matchers)

    def merged(self, other: HookTable) -> HookTable:
        """This table's hooks, then `other`'s, event by event."""
        events = {name: list(matchers) for name, matchers in self.events.items()}
        for name, matchers in other.events.items():
            events.setdefault(name, []).extend(matchers)
        return HookTable(events, [*self.problems, *other.problems])


def read_table(value: object, source: str, *, functions: bool = True) -> HookTable:
    """The table a `hooks` value describes; each entry that cannot be read is one problem
    line (and left out), the rest kept."""
    table = HookTable()
    if not isinstance(value, Mapping):
        table.problems.append(f"{source}: hooks must be a dict of event name → list of matchers")
        return table
    for event, entries in value.items():
        if event not in EVENTS:
            table.problems.append(f"{source}: unknown hook event {event!r} ({', '.join(EVENTS)})")
            continue
        if not isinstance(entries, list):
            table.problems.append(f"{source}: hooks[{event!r}] must be a list of matchers")
            continue
        for index, entry in enumerate(entries):
            where = f"{source}: hooks[{event!r}][{index}]"
            matcher = _matcher(entry, where, (source, functions), table.problems)
            if matcher is not None:
                table.events.setdefault(event, []).append(matcher)
    return table


def _matcher(
    entry: object, where: str, origin: tuple[str, bool], problems: list[str]
) -> Matcher | None:
    """One `{"matcher": ..., "hooks": [...]}` entry (a bare function or command: all tools)."""
    if callable(entry) or isinstance(entry, str):
        entry = {"hooks": [entry]}
    if not isinstance(entry, Mapping) or not isinstance(entry.get("hooks"), list):
        problems.append(f"{where} must be {{'matcher': ..., 'hooks': [...]}}")
        return None
    pattern = entry.get("matcher") or ""
    if not isinstance(pattern, str):
        problems.append(f"{where}: matcher must be a text (a regular expression)")
        return None
    hooks: list[Hook] = []
    for number, raw in enumerate(entry["hooks"]):
        hook = _hook(raw, *origin)
        if isinstance(hook, str):
            problems.append(f"{where}['hooks'][{number}]: {hook}")
        else:
            hooks.append(hook)
    return Matcher(pattern, tuple(hooks)) if hooks else None


def _hook(raw: object, source: str, functions: bool) -> Hook | str:
    """A hook (`source`: where it was configured), or the reason it is not one."""
    if callable(raw):
        return CallableHook(raw) if functions else "a function hook needs the Python config"
    if isinstance(raw, str):
        return CommandHook(raw, source=source)
    if not isinstance(raw, Mapping):
        return "a hook is a command, a function or {'type': 'command', 'command': ...}"
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return f"timeout must be a positive number of seconds, not {timeout!r}"
    if callable(raw.get("function")) and functions:
        return CallableHook(raw["function"], float(timeout))
    kind, command = raw.get("type", "command"), raw.get("command")
    if kind != "command" or not isinstance(command, str) or not command.strip():
        return f"only command hooks run here (type {kind!r} with a `command` text)"
    return CommandHook(command, float(timeout), source)


def settings_table(root: Path, home: Path, files: Iterable[str] = SETTINGS_FILES) -> HookTable:
    """The hooks of Claude Code's settings files: the project's, then the user's."""
    table = HookTable()
    paths = [(root / name, name) for name in files]
    paths.append((home / USER_SETTINGS[2:], USER_SETTINGS))
    for path, shown in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            table.problems.append(f"{shown}: cannot be read ({exc})")
            continue
        if isinstance(data, dict) and "hooks" in data:
            table = table.merged(read_table(data["hooks"], shown, functions=False))
    return table
