"""The editor's side of the protocol as the SDK calls it: each request and update routed to the
chat whose agent session it names.

Each message from the agent runs in a task of its own in the SDK; an update is handed to its
chat before anything awaits, so updates keep the order the agent sent them in. Updates for a
session the editor does not know yet (sent before `session/new` answered) wait for it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Protocol

from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CreateTerminalResponse,
    CurrentModeUpdate,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionInfoUpdate,
    TerminalOutputResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from acp import RequestError

log = logging.getLogger("codecompanion.acp")

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AgentPlanContentUpdate
    | AgentPlanRemovedUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
# Updates kept for a session not known yet, at most (a misbehaving agent cannot fill memory).
MAX_WAITING = 10_000


class SessionSide(Protocol):
    """What one chat serves of the client's side for its agent session."""

    def update(self, update: Update) -> None:
        """Take one update now (it must not wait: order matters)."""

    async def request_permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """The user's answer to the agent's question about a tool call."""

    async def read_text_file(
        self, path: str, line: int | None, limit: int | None
    ) -> ReadTextFileResponse:
        """A file's text as the editor has it."""

    async def write_text_file(self, path: str, content: str) -> WriteTextFileResponse | None:
        """Write a file through the editor's review."""

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> CreateTerminalResponse:
        """Start a command in the chat's sandbox."""

    async def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """A command's output so far."""

    async def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """Wait for a command to end."""

    async def kill_terminal(self, terminal_id: str) -> KillTerminalResponse | None:
        """Stop a command (its output stays readable)."""

    async def release_terminal(self, terminal_id: str) -> ReleaseTerminalResponse | None:
        """Forget a command (stopped first when it still runs)."""


class EditorClient:
    """The SDK's `Client`: routes by session id to the chats attached."""

    def __init__(self) -> None:
        self._sides: dict[str, SessionSide] = {}
        self._waiting: defaultdict[str, list[Update]] = defaultdict(list)

    def attach(self, session_id: str, side: SessionSide) -> None:
        """Route `session_id` to `side`, handing it the updates that came before."""
        self._sides[session_id] = side
        for update in self._waiting.pop(session_id, []):
            side.update(update)

    def detach(self, session_id: str) -> None:
        """Stop routing `session_id` (its chat closed or moved to another session)."""
        self._sides.pop(session_id, None)
        self._waiting.pop(session_id, None)

    def _side(self, session_id: str) -> SessionSide:
        side = self._sides.get(session_id)
        if side is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no open chat has session {session_id}"}
            )
        return side

    async def session_update(self, session_id: str, update: Update, **_meta: Any) -> None:
        """One update, handed on before any await."""
        side = self._sides.get(session_id)
        if side is not None:
            side.update(update)
            return
        waiting = self._waiting[session_id]
        if len(waiting) < MAX_WAITING:
            waiting.append(update)
        else:
            log.warning("session %s: update dropped (no chat has the session yet)", session_id)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **_meta: Any,
    ) -> RequestPermissionResponse:
        """Ask the chat's user."""
        return await self._side(session_id).request_permission(tool_call, options)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_meta: Any,
    ) -> ReadTextFileResponse:
        """`fs/read_text_file`."""
        return await self._side(session_id).read_text_file(path, line, limit)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_meta: Any
    ) -> WriteTextFileResponse | None:
        """`fs/write_text_file`."""
        return await self._side(session_id).write_text_file(path, content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_meta: Any,
    ) -> CreateTerminalResponse:
        """`terminal/create`."""
        side = self._side(session_id)
        return await side.create_terminal(command, args, env, cwd, output_byte_limit)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_meta: Any
    ) -> TerminalOutputResponse:
        """`terminal/output`."""
        return await self._side(session_id).terminal_output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_meta: Any
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`."""
        return await self._side(session_id).wait_for_terminal_exit(terminal_id)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **_meta: Any
    ) -> KillTerminalResponse | None:
        """`terminal/kill`."""
        return await self._side(session_id).kill_terminal(terminal_id)

    async def release_terminal(
        self, session_id: str, terminal_id: str, **_meta: Any
    ) -> ReleaseTerminalResponse | None:
        """`terminal/release`."""
        return await self._side(session_id).release_terminal(terminal_id)
