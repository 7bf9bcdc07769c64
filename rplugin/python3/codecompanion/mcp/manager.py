"""Every configured MCP server of one host: started on first use, restarted after a crash.

The manager never imports the SDK itself: `session.py` is imported when a server first starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .config import ServerConfig, parse_server

if TYPE_CHECKING:
    from ..adapters.keys import KeyResolver
    from .session import Connection, McpCallOutput, ToolInfo

log = logging.getLogger("codecompanion.mcp")


class McpError(Exception):
    """One line saying why an MCP server could not start or answer."""


@dataclass
class _Server:
    """What the manager knows of one server."""

    name: str
    value: Any  # the config dict, or a function returning it (called when first needed)
    config: ServerConfig | None = None
    connection: Connection | None = None
    starting: asyncio.Task[Connection] | None = None
    state: str = "not started"
    error: str | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    started: int = 0


def first_line(exc: BaseException) -> str:
    """The innermost message of `exc` (task groups wrap the real error), on one line."""
    inner = getattr(exc, "exceptions", None)  # an ExceptionGroup (a builtin from 3.11)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


class McpManager:
    """The host's MCP servers by name; `notify` shows one line to the user (e.g. a restart)."""

    def __init__(
        self,
        servers: Mapping[str, Any],
        *,
        keys: KeyResolver | None = None,
        log_dir: Path | None = None,
        ssl_context: Callable[[], ssl.SSLContext] | None = None,
    ) -> None:
        self._servers = {name: _Server(name, value) for name, value in servers.items()}
        self._keys = keys
        self._log_dir = log_dir
        self._ssl = ssl_context
        self._logs: dict[str, TextIO] = {}
        # The stop started by `close` from inside the loop (held so the loop cannot drop it).
        self.closing: asyncio.Task[None] | None = None
        self.notify: Callable[[str], None] = lambda line: log.warning("%s", line)

    def names(self) -> list[str]:
        """The configured servers' names, sorted."""
        return sorted(self._servers)

    def config(self, name: str) -> ServerConfig | None:
        """The server's checked config (None for a function not called yet or a bad config)."""
        server = self._servers.get(name)
        if server is None:
            return None
        if server.config is None and not callable(server.value):
            with contextlib.suppress(ValueError):
                server.config = parse_server(name, server.value)
        return server.config

    def status(self) -> list[dict[str, Any]]:
        """Each server's name, transport, state, tool count and last error (for :checkhealth)."""
        rows = []
        for name in self.names():
            server = self._servers[name]
            config = self.config(name)
            state = server.state
            if server.connection is not None and not server.connection.alive:
                state = "crashed"
            rows.append(
                {
                    "name": name,
                    "transport": config.transport if config else "function (not called yet)",
                    "state": state,
                    "tools": len(server.tools),
                    "error": server.error,
                }
            )
        return rows

    async def tool_infos(self, name: str) -> tuple[ServerConfig, list[ToolInfo]]:
        """The server's config and tools, starting it first if needed; McpError if it can't."""
        connection = await self._connection(name)
        return connection.config, list(connection.tools)

    async def call(self, name: str, tool: str, args: dict[str, Any]) -> McpCallOutput:
        """Call `tool` on server `name`: McpError if the server is down or goes away mid-call."""
        from .session import ConnectionLost

        connection = await self._connection(name)
        try:
            return await connection.call(tool, args, connection.config.timeout)
        except ConnectionLost as exc:
            server = self._servers[name]
            server.state, server.error = "crashed", first_line(exc)
            await connection.stop()
            raise McpError(
                f"MCP server {name} went away during the call ({first_line(exc)}); "
                "it restarts on the next call"
            ) from None

    async def _connection(self, name: str) -> Connection:
        server = self._servers.get(name)
        if server is None:
            raise McpError(f"no MCP server named {name!r}")
        connection = server.connection
        if connection is not None and connection.alive:
            return connection
        if connection is not None:  # it was running and is not any more
            server.connection = None
            await connection.stop()
            self.notify(f"MCP server {name} stopped unexpectedly; restarting it")
        if server.starting is None or server.starting.done():
            server.starting = asyncio.get_running_loop().create_task(self._start(server))
        return await asyncio.shield(server.starting)

    async def _start(self, server: _Server) -> Connection:
        from .session import Connection

        server.state, server.error = "starting", None
        errlog: TextIO | None = None
        begin = 0
        try:
            config = await self._config(server)
            env = {key: await self._resolve(value) for key, value in config.env.items()}
            headers = {key: await self._resolve(value) for key, value in config.headers.items()}
            context = None
            if config.url and config.url.startswith("https://") and self._ssl is not None:
                context = await asyncio.to_thread(self._ssl)
            errlog = self._errlog(server.name) if config.transport == "stdio" else None
            begin = _position(errlog)
            connection = Connection(config, env, headers, errlog=errlog, ssl_context=context)
            server.tools = await connection.start()
        except Exception as exc:
            # "Connection closed" says little: what the server printed as it died says why.
            cause = _last_line(errlog, begin) if errlog is not None else None
            server.state, server.error = "failed", cause or first_line(exc)
            raise McpError(f"MCP server {server.name} failed to start: {server.error}") from None
        server.connection, server.state = connection, "running"
        server.started += 1
        log.info("MCP server %s started (%d tools)", server.name, len(server.tools))
        return connection

    async def _config(self, server: _Server) -> ServerConfig:
        if server.config is None:
            value = server.value
            if callable(value):
                value = value()
                if asyncio.iscoroutine(value):
                    value = await value
            server.config = parse_server(server.name, value)
        return server.config

    async def _resolve(self, value: str) -> str:
        """`env:VAR`/`cmd:...` like an adapter key; the value itself is never logged."""
        if self._keys is None or not value.startswith(("env:", "cmd:")):
            return value
        resolved = await self._keys.resolve(value)
        return resolved or ""

    def _errlog(self, name: str) -> TextIO:
        """Where a stdio server's stderr goes: a log file per server (never Neovim's screen)."""
        if name in self._logs:
            return self._logs[name]
        path = os.devnull
        if self._log_dir is not None:
            with contextlib.suppress(OSError):
                self._log_dir.mkdir(parents=True, exist_ok=True)
                path = str(self._log_dir / f"mcp-{name}.log")
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in aclose
        self._logs[name] = handle
        return handle

    async def aclose(self) -> None:
        """Stop every server (processes end, HTTP sessions are closed)."""
        for server in self._servers.values():
            if server.starting is not None and not server.starting.done():
                server.starting.cancel()
                with contextlib.suppress(BaseException):
                    await server.starting
            if server.connection is not None:
                await server.connection.stop()
                server.connection, server.state = None, "stopped"
        for handle in self._logs.values():
            handle.close()
        self._logs.clear()

    def close(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Stop every server from synchronous code (the host is exiting; its loop has stopped)."""
        running = self._logs or any(s.connection or s.starting for s in self._servers.values())
        if not running or loop is None or loop.is_closed():
            return
        if loop.is_running():
            self.closing = loop.create_task(self.aclose())
            return
        try:
            loop.run_until_complete(asyncio.wait_for(self.aclose(), 15))
        except Exception:
            log.exception("stopping the MCP servers failed")


def _position(handle: TextIO | None) -> int:
    """Where the server's stderr log ends now (0 when it cannot tell)."""
    if handle is None:
        return 0
    try:
        handle.flush()
        return os.fstat(handle.fileno()).st_size
    except (OSError, ValueError):
        return 0


def _last_line(handle: TextIO, begin: int, limit: int = 64_000) -> str | None:
    """The last non-empty line the server wrote to its stderr log since `begin`."""
    try:
        with open(handle.name, "rb") as log_file:
            log_file.seek(max(begin, os.fstat(log_file.fileno()).st_size - limit))
            text = log_file.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else None
