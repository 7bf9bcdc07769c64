"""One chat's hooks: the events it fires (Claude Code's names and JSON shapes) and what it
does with their verdicts' lines. Every hook of an event runs at once; a broken one is one line
in the chat and the log, and the event goes on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..messages import ToolCall, ToolResult
from .run import Where, run_hook
from .table import HookTable, claude_name
from .tool_input import from_hook, hook_input
from .verdict import Verdict, verdict

log = logging.getLogger("codecompanion.hooks")


class ChatHooks:
    """The hooks a chat runs, where they run, and how their lines reach the user."""

    def __init__(self, table: HookTable, where: Callable[[], Where], chat_id: str = "") -> None:
        self.table = table
        self.where = where
        self.chat_id = chat_id
        self.say: Callable[[str], None] = lambda line: None  # the chat shows it (Workspace.chat)
        self.mode: Callable[[], str] = lambda: "ask"

    def only(self, events: tuple[str, ...]) -> ChatHooks:
        """The same hooks, for `events` alone (a subagent runs the tool events only)."""
        kept = {event: m for event, m in self.table.events.items() if event in events}
        hooks = ChatHooks(HookTable(kept), self.where, self.chat_id)
        hooks.say, hooks.mode = self.say, self.mode
        return hooks

    def has(self, event: str) -> bool:
        """True when some hook runs on `event` (for any subject)."""
        return bool(self.table.events.get(event))

    async def fire(
        self,
        event: str,
        payload: Mapping[str, Any],
        subject: str | None = None,
        claude: str | None = None,
    ) -> Verdict:
        """Run the hooks of `event` (on `subject`, a tool's name; `claude`, Claude Code's name
        for it) and say their lines."""
        hooks = self.table.hooks(event, subject, claude)
        if not hooks:
            return Verdict()
        where = self.where()
        data = {
            "session_id": self.chat_id,
            "transcript_path": None,
            "cwd": str(where.cwd),
            "permission_mode": self.mode(),
            "hook_event_name": event,
            **payload,
        }
        runs = await asyncio.gather(*(run_hook(hook, data, where) for hook in hooks))
        result = verdict(event, list(runs))
        for line in result.notices:
            self._tell(line)
        return result

    def _tell(self, line: str) -> None:
        log.warning("%s", line)
        self.say(line)

    async def before_tool(
        self, call: ToolCall, args: Mapping[str, Any], opts: Mapping[str, Any] | None = None
    ) -> Verdict:
        """PreToolUse: a block refuses the call, its reason the call's result; `updated_input`
        is the arguments to run with instead, as the tool names them (None: unchanged).
        `opts` are the tool's (an MCP tool's server and name)."""
        claude = claude_name(call.name, opts or {})
        said = await self.fire("PreToolUse", self._tool(call, args, claude), call.name, claude)
        if said.updated_input is None:
            return said
        new = from_hook(args, said.updated_input, self.where().cwd)
        said.updated_input = None if new == dict(args) else new
        if said.updated_input is None:
            return said
        for label in said.changed_by:
            self._tell(f"hook {label} changed the call's arguments")
        if said.changed_by_project:
            # What runs is the repository's doing: the user sees it before it runs.
            said.permission = "ask"
            said.asking.append("a hook of the project's settings changed the arguments")
        return said

    async def after_tool(
        self,
        call: ToolCall,
        args: Mapping[str, Any],
        result: ToolResult,
        opts: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """PostToolUse: the tool has run; a block's reason and any context reach the model."""
        claude = claude_name(call.name, opts or {})
        payload = self._tool(call, args, claude)
        payload["tool_response"] = {"status": result.status, "output": result.for_llm}
        return await self.fire("PostToolUse", payload, call.name, claude)

    def _tool(self, call: ToolCall, args: Mapping[str, Any], claude: str) -> dict[str, Any]:
        """A call as Claude Code's hooks read it: `tool_name`, `tool_input`, `tool_use_id`."""
        return {
            "tool_name": call.name,
            "claude_tool_name": claude,
            "tool_input": hook_input(args, self.where().cwd),
            "tool_use_id": call.id,
        }


def hooks_of(tools: object) -> ChatHooks | None:
    """The chat's hooks, from its tool system (None: no hooks)."""
    hooks = getattr(tools, "hooks", None)
    return hooks if isinstance(hooks, ChatHooks) else None
