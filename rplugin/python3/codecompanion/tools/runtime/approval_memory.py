"""The approvals a chat remembers ("always"), saved with the chat."""

from __future__ import annotations

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
