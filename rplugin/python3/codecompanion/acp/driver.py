"""The turn driver of a chat whose turns an external agent produces over ACP.

The agent starts on the chat's first turn (and again on the next turn after it died); its
session is made with the chat's project and MCP servers, or loaded again for a restored chat.
A turn sends the user's message as `session/prompt`; the agent's updates are drawn and stored
as they come (`updates.py`), its requests served by the chat (`files.py`, `terminals.py`,
`permissions.py`). `q` sends `session/cancel` and answers its open questions `cancelled`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    PromptResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ..chat import transcript
from ..chat.driver import TurnStatus
from ..context.sources import ContextItem
from ..messages import Message
from ..ports import Editor
from ..render_ops import Lock, Ready, Replace, Spinner, Usage
from .client import Update
from .connection import AgentConnection, AgentError, McpServer
from .content import prompt_blocks
from .files import AgentFiles
from .mcp_servers import mcp_servers
from .permissions import AgentPermissions
from .process import agent_env
from .project_grants import confirm_start
from .session_state import AgentSessionState
from .settings import AgentSettings
from .terminals import AgentTerminals
from .updates import AgentUpdates, TitledSession

log = logging.getLogger("codecompanion.acp")

# Seconds a stopped turn's request has to end before the next prompt is sent anyway.
STOP_GRACE = 5.0
STOPPED = {
    "end_turn": "success",
    "max_tokens": "error",
    "max_turn_requests": "error",
    "refusal": "error",
    "cancelled": "cancelled",
}


@dataclass
class AgentHost:
    """What an agent chat needs of the host: the editor's environment, secrets resolved
    (`env:`/`cmd:`), where agents' stderr goes, the editor, and the configured MCP servers."""

    env: Mapping[str, str]
    resolve: Callable[[str], Awaitable[str]]
    log_dir: Path | None = None
    editor: Editor | None = None
    mcp: Mapping[str, Any] = field(default_factory=dict)


class AgentDriver:
    """Produces a chat's turns with an external agent; serves the agent's requests."""

    def __init__(
        self,
        chat: TitledSession,
        settings: AgentSettings,
        host: AgentHost,
        session_id: str | None = None,
    ) -> None:
        self.chat = chat
        self.settings = settings
        self.host = host
        name = settings.name
        self.state = AgentSessionState(name, session_id)
        self.terminals = AgentTerminals(chat, name, self._running)
        self.updates = AgentUpdates(chat, self.state, self.terminals.text)
        self.files = AgentFiles(chat, host.editor, name)
        self.permissions = AgentPermissions(
            chat, name, self.updates.content_text, self.updates.known
        )
        self.permissions.allowed_execute = self._allow_command
        self.permissions.announce = self.updates.announce
        chat.context.meter_source = self.updates.meter  # the agent counts its own context
        self.connection: AgentConnection | None = None
        self._context: list[ContextItem] = []
        self._errlog: TextIO | None = None
        self._cancelling: asyncio.Task[None] | None = None
        self._started = False  # the agent has been started once (the project's grants asked)
        self._prompting: asyncio.Task[PromptResponse] | None = None
        self._connecting = asyncio.Lock()

    # ----- the TurnDriver contract -----------------------------------------------------------

    compacts = False  # `/compact` goes to the agent

    def message(self, text: str, context: list[ContextItem]) -> Message | None:
        """The user's text as sent, its context kept for the prompt's blocks."""
        self._context = list(context)
        return Message(role="user", content=text)

    def to_state(self) -> dict[str, str]:
        """The agent and its session, for the saved chat."""
        state = {"agent": self.settings.name}
        if self.state.session_id:
            state["session_id"] = self.state.session_id
        return state

    async def turn(self) -> TurnStatus:
        """One `session/prompt`: the answer streamed in, stored, every call given its end."""
        chat = self.chat
        chat.view.render([Lock(), Spinner(on=True, text=f"starting {self.settings.name}")])
        chat.fire("RequestStarted")
        self.updates.turn += 1
        try:
            status = await self._prompt()
        except asyncio.CancelledError:
            # What the agent still sends of the stopped turn is not shown (it ends it soon).
            self.updates.replay = "quiet"
            self._ended("stopped")
            chat.fire("RequestFinished", status="cancelled")
            raise
        except AgentError as exc:
            self._ended(str(exc))
            chat.view.notify(str(exc), "error")
            status = "error"
        chat.fire("RequestFinished", status=status)
        return status

    async def _prompt(self) -> TurnStatus:
        connection = await self._connect()
        session_id = self.state.session_id
        assert session_id is not None
        # The header once the agent has said which model it uses.
        self.chat.view.render(
            [
                transcript.header("llm", self.state.header()),
                Spinner(on=True, text=f"{self.settings.name} is working"),
            ]
        )
        last = self.chat.messages[len(self.chat.messages) - 1]
        blocks = prompt_blocks(last.content or "", self._context, embedded=connection.embeds)
        for message in self.chat.messages:
            message.meta.sent = True
        await self._stopped_turn_ended()
        prompting = asyncio.get_running_loop().create_task(
            connection.prompt(session_id, list(blocks))
        )
        prompting.add_done_callback(_retrieved)
        self._prompting = prompting
        # Shielded: a stop leaves the request to end with the agent's `cancelled` answer.
        response = await asyncio.shield(prompting)
        reason = response.stop_reason
        status = STOPPED.get(reason, "success")
        self._ended(None if status != "error" else f"the agent stopped: {reason}")
        if response.usage is not None:
            self.chat.view.render([Usage(text=f"({response.usage.total_tokens} tokens)")])
        return "cancelled" if status == "cancelled" else "error" if status == "error" else "success"

    async def _stopped_turn_ended(self) -> None:
        """Wait (a little) for a stopped turn's request to end, so its last updates are not
        taken for this turn's."""
        previous = self._prompting
        if previous is not None and not previous.done():
            await asyncio.wait({previous}, timeout=STOP_GRACE)
        self.updates.replay = None

    def _ended(self, incomplete: str | None) -> None:
        """The turn's text stored, calls the agent left open answered."""
        updates = self.updates
        text = "".join(updates.text)
        if incomplete and (text or updates.reasoning):
            updates.text = [text]
        updates.flush_text()
        if incomplete:
            last = self.chat.messages[len(self.chat.messages) - 1]
            if last.role == "llm":
                last.extra["incomplete"] = incomplete
            self.chat.view.render([transcript.block(f"_[incomplete: {incomplete}]_")])
        updates.answer_pending(
            f"The agent's turn ended ({incomplete or 'done'}) before this call did."
        )
        self.chat.view.flush()

    def cancel(self) -> None:
        """`session/cancel`; open questions answered `cancelled`; commands keep their output."""
        self.permissions.cancel()
        connection, session_id = self.connection, self.state.session_id
        if connection is not None and session_id is not None and connection.alive:
            loop = asyncio.get_running_loop()
            self._cancelling = loop.create_task(connection.cancel(session_id))

    # ----- the agent and its session ---------------------------------------------------------

    async def resume(self) -> None:
        """Start the agent now and load the chat's session, its history drawn as it replays
        (`:CodeCompanionChat Resume` opens a chat on an agent's earlier session)."""
        self.chat.view.render([Replace(lines=[""]), Lock(), Spinner(on=True, text="loading")])
        try:
            await self._connect()
        except AgentError as exc:
            self.chat.view.notify(str(exc), "error")
        finally:
            self.chat.view.render([Spinner(on=False), Ready(text=transcript.USER_HEADER)])

    async def _connect(self) -> AgentConnection:
        """The running agent with this chat's session, started (or restarted after a crash)
        once however many ask at the same time."""
        async with self._connecting:
            return await self._connected()

    async def _connected(self) -> AgentConnection:
        connection = self.connection
        if connection is not None and connection.alive:
            return connection
        if connection is not None:
            self.chat.view.notify(f"{connection.exit_line()}; starting it again", "warn")
            await self.close()
        connection = await self._open()
        self.connection = connection
        try:
            await self._session(connection)
        except BaseException:
            self.connection = None
            await connection.close()
            raise
        return connection

    async def _open(self) -> AgentConnection:
        settings = self.settings
        if not self._started:  # asked once a chat, not at each restart
            await confirm_start(self.chat, settings.name, settings.project_settings)
            self._started = True
        resolved = {key: await self.host.resolve(value) for key, value in settings.env.items()}
        env = agent_env(self.host.env, settings.pass_env, resolved)
        cwd = Path(self.chat.tools.cwd)
        return await AgentConnection.open(settings, env, cwd, self._log(), self._bad_line)

    async def _session(self, connection: AgentConnection) -> None:
        """Load the chat's session when the agent can; else make a new one."""
        cwd = Path(self.chat.tools.cwd)
        servers = await self._mcp(connection)
        wanted = self.state.session_id
        if wanted and connection.can_load:
            quiet = any(m.role != "system" for m in self.chat.messages)
            self.updates.replay = "quiet" if quiet else "show"
            connection.client.attach(wanted, self)  # the replay comes before the answer
            try:
                state = await connection.load_session(wanted, cwd, servers)
            finally:
                self.updates.flush_text(self.updates.replay_role())
                self.updates.replay = None
        else:
            if wanted:
                self.chat.view.notify(
                    f"{self.settings.name} cannot load session {wanted}: a new session starts",
                    "warn",
                )
            state = await connection.new_session(cwd, servers)
            connection.client.attach(state.session_id, self)
        self.state.started(state)
        self.chat.view.render([*self.state.vars(), self.updates.meter()])
        self.chat.save()

    async def _mcp(self, connection: AgentConnection) -> list[McpServer]:
        if not self.settings.mcp:
            return []
        servers, skipped = await mcp_servers(
            self.host.mcp, self.host.resolve, connection.takes_http_mcp
        )
        if skipped:
            names = ", ".join(skipped)
            self.chat.view.notify(
                f"{self.settings.name} takes no HTTP MCP servers: {names} left out"
            )
        return servers

    def _log(self) -> TextIO | None:
        """The agent's stderr log, `acp-<name>.log` beside the host's log."""
        if self._errlog is None and self.host.log_dir is not None:
            with contextlib.suppress(OSError):
                self.host.log_dir.mkdir(parents=True, exist_ok=True)
                path = self.host.log_dir / f"acp-{self.settings.name}.log"
                self._errlog = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        return self._errlog

    def _bad_line(self, line: str) -> None:
        log.warning("agent %s: %s", self.settings.name, line)
        self.chat.view.notify(f"{self.settings.name}: {line}", "warn")

    def _running(self, command: str, output: str) -> None:
        """A command's latest output line on the chat's progress line."""
        lines = [line for line in output.splitlines() if line.strip()]
        if lines:
            shown = f"{command[:40]}: {lines[-1].strip()[:60]}"
            self.chat.view.render([Spinner(on=True, text=shown)])

    def _allow_command(self) -> None:
        self.terminals.allowed += 1

    async def set_mode(self, mode_id: str) -> None:
        """`session/set_mode` (a keymap picks the mode); one line when it fails."""
        await self._session_call(lambda c, s: c.set_mode(s, mode_id))
        self.state.set_mode(mode_id)
        self.chat.view.render([self.state.mode_var(), self.updates.meter()])

    async def set_option(self, config_id: str, value: str | bool) -> None:
        """`session/set_config_option` (model, thought level, ...)."""
        result: list[Any] = []

        async def call(connection: AgentConnection, session_id: str) -> None:
            result.extend(await connection.set_config(session_id, config_id, value))

        await self._session_call(call)
        if result:
            self.state.config_options = result
        self.chat.adapter.settings.model = self.state.model
        self.chat.view.render([self.state.options_var(), self.updates.meter()])
        self.chat.save()

    async def _session_call(self, work: Callable[[AgentConnection, str], Awaitable[None]]) -> None:
        connection = await self._connect()
        assert self.state.session_id is not None
        await work(connection, self.state.session_id)

    async def close(self) -> None:
        """End the agent and its commands."""
        self.terminals.close()
        connection, self.connection = self.connection, None
        if connection is not None:
            if self.state.session_id:
                connection.client.detach(self.state.session_id)
            await connection.close()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # ----- the client's side, for this chat's session ----------------------------------------

    def update(self, update: Update) -> None:
        """One `session/update`, drawn and stored now."""
        self.updates.update(update)

    async def request_permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """`session/request_permission`."""
        self.chat.view.flush()
        return await self.permissions.request_permission(tool_call, options)

    async def read_text_file(
        self, path: str, line: int | None, limit: int | None
    ) -> ReadTextFileResponse:
        """`fs/read_text_file`."""
        return await self.files.read_text_file(path, line, limit)

    async def write_text_file(self, path: str, content: str) -> WriteTextFileResponse:
        """`fs/write_text_file`."""
        return await self.files.write_text_file(path, content)

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> CreateTerminalResponse:
        """`terminal/create`."""
        return await self.terminals.create_terminal(command, args, env, cwd, output_byte_limit)

    async def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """`terminal/output`."""
        return await self.terminals.terminal_output(terminal_id)

    async def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`."""
        return await self.terminals.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, terminal_id: str) -> KillTerminalResponse:
        """`terminal/kill`."""
        return await self.terminals.kill_terminal(terminal_id)

    async def release_terminal(self, terminal_id: str) -> ReleaseTerminalResponse:
        """`terminal/release`."""
        return await self.terminals.release_terminal(terminal_id)


def _retrieved(task: asyncio.Task[PromptResponse]) -> None:
    """A stopped turn's request: its failure is logged, not left unretrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.info("a stopped turn's request ended: %s", task.exception())
