"""One live connection to an MCP server, through the official `mcp` SDK (imported only here).

The SDK's transports are anyio context managers that must be entered and left in one task, so
each connection runs in its own task that holds them open until `stop`. Calls from other tasks
go through the SDK's client, whose requests are matched to answers by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import httpx2
import mcp_types
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp import Client

from .config import ServerConfig

log = logging.getLogger("codecompanion.mcp")

# Servers that page their tool list endlessly must not hang the start.
_MAX_PAGES = 50
_CONNECT_TIMEOUT = 30.0


class ConnectionLost(Exception):
    """The server went away (its process exited, or its HTTP endpoint closed the session)."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server lists: its name, description and input schema (plain data)."""

    name: str
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """A call's answer as text, and whether the server marked it an error."""

    text: str
    is_error: bool


class Connection:
    """A started server: list its tools, call them, stop it."""

    def __init__(
        self,
        config: ServerConfig,
        env: Mapping[str, str],
        headers: Mapping[str, str],
        *,
        errlog: TextIO | None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.config = config
        self._env = dict(env)
        self._headers = dict(headers)
        self._errlog = errlog
        self._ssl = ssl_context
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.tools: list[ToolInfo] = []

    @property
    def alive(self) -> bool:
        """False once stopped, or once the transport has seen the server go (process exit, EOF)."""
        if self._task is None or self._task.done() or self._client is None:
            return False
        # The SDK's dispatcher marks itself closed at EOF; reading it lets a server that died
        # while idle be restarted before a call is sent, rather than failing that call.
        dispatcher = getattr(self._client.session, "_dispatcher", None)
        return not bool(getattr(dispatcher, "_closed", False))

    async def start(self) -> list[ToolInfo]:
        """Connect, initialize and list the tools; raises (with the server stopped) on failure."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._serve(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), _CONNECT_TIMEOUT)
        except BaseException:
            await self.stop()
            raise
        return self.tools

    def _transport(self) -> Any:
        if self.config.url is not None:
            http = httpx2.AsyncClient(
                headers=self._headers,
                timeout=httpx2.Timeout(30.0, read=300.0),
                verify=self._ssl if self._ssl is not None else True,
            )
            return http, streamable_http_client(self.config.url, http_client=http)
        command, *args = self.config.cmd
        params = StdioServerParameters(
            command=command, args=list(args), env=self._env or None, cwd=self.config.cwd
        )
        from mcp.client.stdio import stdio_client

        if self._errlog is None:
            return None, stdio_client(params)
        return None, stdio_client(params, errlog=self._errlog)

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Hold the transport open until `stop` (entered and left in this one task)."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                http, transport = self._transport()
                if http is not None:
                    await stack.enter_async_context(http)
                client = Client(transport, raise_exceptions=False, cache=None)
                self._client = await stack.enter_async_context(client)
                self.tools = await self._list_tools(self._client)
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionLost(str(exc)))
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
        finally:
            self._client = None
            if not ready.done():
                ready.set_exception(ConnectionLost("the server closed the connection"))

    @staticmethod
    async def _list_tools(client: Client) -> list[ToolInfo]:
        tools: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                tools.append(ToolInfo(tool.name, tool.description or "", dict(schema)))
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, tool: str, args: dict[str, Any], timeout: float | None) -> Outcome:
        """Call `tool`: ConnectionLost when the server is gone; an MCP error is an error outcome."""
        client = self._client
        if client is None or not self.alive:
            raise ConnectionLost("the server is not running")
        try:
            result = await client.call_tool(tool, args, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ConnectionLost(str(exc)) from None
            return Outcome(f"MCP error {exc.code}: {exc}", True)
        if not isinstance(result, mcp_types.CallToolResult):
            return Outcome(f"unexpected MCP result: {type(result).__name__}", True)
        return Outcome(result_text(result), bool(result.is_error))

    async def stop(self) -> None:
        """Leave the transport (the SDK ends the process or the HTTP session) and wait for it."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 10)
        except (asyncio.TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def result_text(result: mcp_types.CallToolResult) -> str:
    """Text parts as they are; images, audio and resources as one short note each."""
    parts: list[str] = []
    for item in result.content:
        if isinstance(item, mcp_types.TextContent):
            parts.append(item.text)
        elif isinstance(item, (mcp_types.ImageContent, mcp_types.AudioContent)):
            kind = "image" if isinstance(item, mcp_types.ImageContent) else "audio"
            size = len(item.data) * 3 // 4
            parts.append(f"[{kind} ({item.mime_type}, about {size} bytes) not shown]")
        elif isinstance(item, mcp_types.ResourceLink):
            parts.append(f"[resource link: {item.uri}]")
        elif isinstance(item, mcp_types.EmbeddedResource):
            resource = item.resource
            mime = getattr(resource, "mime_type", None) or "unknown type"
            parts.append(f"[resource {resource.uri} ({mime}) not shown]")
        else:
            parts.append(f"[{getattr(item, 'type', 'content')} not shown]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return "\n".join(parts)
