"""The approvals a chat remembers ("always"), saved with the chat."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ApprovalMemory:
    """The approvals a chat remembers: whole tools, or single command lines of a tool."""

    tools: set[str] = field(default_factory=set)
    commands: set[tuple[str, str]] = field(default_factory=set)

    def remember(self, name: str, key: str, per_command: bool) -> None:
        """Remember an "always" answer."""
        if per_command:
            self.commands.add((name, key))
        else:
            self.tools.add(name)

    def covers(self, name: str, key: str) -> bool:
        """True if the user already said "always" for this tool (or this exact command)."""
        return name in self.tools or (name, key) in self.commands

    def count(self) -> int:
        """How many approvals are remembered."""
        return len(self.tools) + len(self.commands)

    def to_state(self) -> dict[str, Any]:
        """A JSON-ready copy, for saved chats."""
        return {"tools": sorted(self.tools), "commands": sorted(list(c) for c in self.commands)}

    @classmethod
    def from_state(cls, state: Any) -> ApprovalMemory:
        """Read back `to_state` output; anything malformed is dropped."""
        state = state if isinstance(state, dict) else {}
        tools = {str(name) for name in state.get("tools", []) if isinstance(name, str)}
        commands = {
            (str(item[0]), str(item[1]))
            for item in state.get("commands", [])
            if isinstance(item, (list, tuple)) and len(item) == 2
        }
        return cls(tools, commands)


def blanket_allowed(opts: Mapping[str, Any]) -> bool:
    """True if a tool with these options can be approved tool-wide (as "always" grants it)."""
    return opts.get("allowed_in_yolo_mode", True) is not False and not opts.get(
        "require_cmd_approval"
    )


def restorable(
    memory: ApprovalMemory, tool_opts: Callable[[str], Mapping[str, Any] | None]
) -> tuple[ApprovalMemory, list[str]]:
    """What a saved chat's approvals may restore, and the tools whose tool-wide one is refused.

    A tool-wide approval for a tool "always" never grants tool-wide (run_command,
    delete_file, code_runner...) or a tool that is not there is refused: only a hand-made
    file holds one.
    """
    kept = ApprovalMemory(commands=set(memory.commands))
    refused: list[str] = []
    for name in sorted(memory.tools):
        opts = tool_opts(name)
        if opts is not None and blanket_allowed(opts):
            kept.tools.add(name)
        else:
            refused.append(name)
    return kept, refused


def describe(memory: ApprovalMemory) -> list[str]:
    """One line per remembered approval, as the user is shown them."""
    lines = [f"{name}: every call" for name in sorted(memory.tools)]
    lines += [f"{name}: `{key}`" for name, key in sorted(memory.commands)]
    return lines
