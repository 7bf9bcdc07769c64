"""One connection to an agent: its process, the SDK's client-side connection, `initialize`,
logging in when the agent asks, and the session requests a chat makes, each failure one line."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast

from acp.client.connection import ClientSideConnection
from acp.schema import (
    AuthMethodAgent,
    ClientCapabilities,
    EnvVarAuthMethod,
    FileSystemCapabilities,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    McpServerStdio,
    PromptResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionInfo,
    SessionModeState,
    TerminalAuthMethod,
)

from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent

from .client import EditorClient
from .process import AgentProcess
from .settings import AgentSettings

log = logging.getLogger("codecompanion.acp")

# Seconds an agent has to answer `initialize` (a Node agent may take a few to start).
INIT_TIMEOUT = 60.0
AUTH_REQUIRED = -32000
ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean
McpServer = McpServerStdio | HttpMcpServer
AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent
T = TypeVar("T")


class AgentError(Exception):
    """An agent failed or refused: the message is the one line the chat shows."""


@dataclass
class SessionState:
    """What the agent said of a session when it was made or loaded."""

    session_id: str
    modes: SessionModeState | None = None
    config_options: list[ConfigOption] = field(default_factory=list)


class AgentConnection:
    """A running agent and the SDK connection to it."""

    def __init__(
        self,
        settings: AgentSettings,
        process: AgentProcess,
        conn: ClientSideConnection,
        client: EditorClient,
        env: Mapping[str, str],
    ) -> None:
        self.settings = settings
        self.process = process
        self.conn = conn
        self.client = client
        self._env = env
        self.info = InitializeResponse(protocol_version=PROTOCOL_VERSION)

    @classmethod
    async def open(
        cls,
        settings: AgentSettings,
        env: Mapping[str, str],
        cwd: Path,
        errlog: TextIO | None,
        bad_line: Callable[[str], None],
    ) -> AgentConnection:
        """Start the agent and initialize the connection."""
        try:
            process = await AgentProcess.start(settings.cmd, env, cwd, errlog)
        except OSError as exc:
            raise AgentError(
                f"agent {settings.name}: cannot run {settings.cmd[0]} ({exc.strerror or exc}); "
                "is it installed and on PATH? (see :help codecompanion-acp)"
            ) from None
        client = EditorClient()
        # The SDK's router looks each method up on the client and answers "method not found"
        # for what it lacks (elicitations, extensions): the protocol's full shape is not needed.
        conn = connect_to_agent(cast(Client, client), process.transport(bad_line))
        agent = cls(settings, process, conn, client, env)
        try:
            await agent._initialize()
        except BaseException:
            await agent.close()
            raise
        return agent

    async def _initialize(self) -> None:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        me = Implementation(name="codecompanion", title="CodeCompanion (Python)", version="0.1.0")
        self.info = await self._call(
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities, client_info=me
            ),
            timeout=INIT_TIMEOUT,
        )
        if self.info.protocol_version != PROTOCOL_VERSION:
            raise AgentError(
                f"agent {self.settings.name} speaks ACP version {self.info.protocol_version}; "
                f"this plugin speaks version {PROTOCOL_VERSION}"
            )
        agent = self.info.agent_info
        log.info(
            "agent %s: %s %s", self.settings.name, agent and agent.name, agent and agent.version
        )

    @property
    def alive(self) -> bool:
        """True while the agent's process runs."""
        return self.process.alive

    @property
    def can_load(self) -> bool:
        """Whether the agent can load an earlier session (`session/load`)."""
        capabilities = self.info.agent_capabilities
        return bool(capabilities and capabilities.load_session)

    @property
    def can_list(self) -> bool:
        """Whether the agent lists its sessions (`session/list`)."""
        capabilities = self.info.agent_capabilities
        sessions = capabilities.session_capabilities if capabilities else None
        return sessions is not None and sessions.list is not None

    @property
    def takes_images(self) -> bool:
        """Whether prompts may carry images."""
        capabilities = self.info.agent_capabilities
        prompt = capabilities.prompt_capabilities if capabilities else None
        return bool(prompt and prompt.image)

    @property
    def embeds(self) -> bool:
        """Whether prompts may carry files as embedded resources."""
        capabilities = self.info.agent_capabilities
        prompt = capabilities.prompt_capabilities if capabilities else None
        return bool(prompt and prompt.embedded_context)

    @property
    def takes_http_mcp(self) -> bool:
        """Whether the agent connects to MCP servers over HTTP."""
        capabilities = self.info.agent_capabilities
        mcp = capabilities.mcp_capabilities if capabilities else None
        return bool(mcp and mcp.http)

    async def new_session(self, cwd: Path, mcp: list[McpServer]) -> SessionState:
        """`session/new` (logging in first when the agent asks and a way is known)."""
        response = await self._logged_in(
            lambda: self.conn.new_session(cwd=str(cwd), mcp_servers=list(mcp))
        )
        return SessionState(
            response.session_id, response.modes, list(response.config_options or [])
        )

    async def load_session(self, session_id: str, cwd: Path, mcp: list[McpServer]) -> SessionState:
        """`session/load`: the agent replays the session as updates, then answers."""
        response = await self._logged_in(
            lambda: self.conn.load_session(
                cwd=str(cwd), session_id=session_id, mcp_servers=list(mcp)
            )
        )
        modes = response.modes if response is not None else None
        options = list(response.config_options or []) if response is not None else []
        return SessionState(session_id, modes, options)

    async def list_sessions(self, cwd: Path) -> list[SessionInfo]:
        """`session/list` for the project (the first page)."""
        response = await self._call(self.conn.list_sessions(cwd=str(cwd)))
        return list(response.sessions)

    async def prompt(self, session_id: str, blocks: list[Any]) -> PromptResponse:
        """`session/prompt`: answers when the agent's turn is over."""
        return await self._call(self.conn.prompt(session_id=session_id, prompt=blocks))

    async def cancel(self, session_id: str) -> None:
        """`session/cancel` (a notification: the prompt then answers `cancelled`)."""
        try:
            await self.conn.cancel(session_id=session_id)
        except (ConnectionError, RequestError) as exc:
            log.info("agent %s: cancel not sent: %s", self.settings.name, exc)

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """`session/set_mode`."""
        await self._call(self.conn.set_session_mode(session_id=session_id, mode_id=mode_id))

    async def set_config(
        self, session_id: str, config_id: str, value: str | bool
    ) -> list[ConfigOption]:
        """`session/set_config_option`; the options as they now are."""
        response = await self._call(
            self.conn.set_config_option(config_id=config_id, session_id=session_id, value=value)
        )
        return list(response.config_options) if response is not None else []

    async def _logged_in(self, request: Callable[[], Awaitable[T]]) -> T:
        try:
            return await self._call(request(), auth_ok=True)
        except _AuthRequired:
            await self._authenticate()
            return await self._call(request())

    async def _authenticate(self) -> None:
        methods = list(self.info.auth_methods or [])
        chosen = self._auth_method(methods)
        if chosen is None:
            raise AgentError(_login_line(self.settings, methods))
        log.info("agent %s: authenticating with %s", self.settings.name, chosen)
        await self._call(self.conn.authenticate(method_id=chosen))

    def _auth_method(self, methods: list[AuthMethod]) -> str | None:
        """The configured method, else one whose variables the agent's environment has."""
        if self.settings.auth_method is not None:
            return self.settings.auth_method
        for method in methods:
            if isinstance(method, EnvVarAuthMethod) and all(
                v.name in self._env for v in method.vars
            ):
                return method.id
        return None

    async def _call(
        self, work: Awaitable[T], timeout: float | None = None, auth_ok: bool = False
    ) -> T:
        """`work`, its failures as AgentError lines."""
        name = self.settings.name
        try:
            return await asyncio.wait_for(work, timeout)
        except RequestError as exc:
            if auth_ok and exc.code == AUTH_REQUIRED:
                raise _AuthRequired from None
            raise AgentError(f"agent {name}: {_request_error(exc)}") from None
        except asyncio.TimeoutError:
            raise AgentError(f"agent {name} did not answer within {timeout:.0f} s") from None
        except ConnectionError:
            await self.process.settled()
            raise AgentError(self.exit_line()) from None
        except ValueError as exc:  # an answer the SDK's types refuse
            raise AgentError(f"agent {name} answered something unreadable: {_first(exc)}") from None

    def exit_line(self) -> str:
        """Why the connection is gone: the agent's exit and its last line on stderr."""
        code = self.process.process.returncode
        how = f"exited (status {code})" if code is not None else "closed the connection"
        said = f": {self.process.last_error}" if self.process.last_error else ""
        return f"agent {self.settings.name} {how}{said}"

    async def close(self) -> None:
        """Close the connection and end the agent (and whatever it started)."""
        try:
            await asyncio.wait_for(self.conn.close(), 2)
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        await self.process.stop()


class _AuthRequired(Exception):
    pass


def _login_line(settings: AgentSettings, methods: list[AuthMethod]) -> str:
    """One line: the agent needs a login, the ways it offers, and how to pick one."""
    if not methods:
        return f"agent {settings.name} needs a login and offers no way to log in from an editor"
    ways = "; ".join(
        f"{m.id} ({m.name}{': ' + m.description if m.description else ''})" for m in methods
    )
    return (
        f"agent {settings.name} needs a login: log in with its own command in a terminal, "
        f"or set acp[{settings.name!r}]['auth_method'] to one of: {ways}"
    )


def _request_error(exc: RequestError) -> str:
    data = exc.data
    detail = data.get("details") or data.get("message") if isinstance(data, dict) else data
    text = f"{exc} ({detail})" if detail and str(detail) not in str(exc) else str(exc)
    return _first(text)


def _first(value: object) -> str:
    lines = str(value).strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= 300 else line[:297] + "..."
