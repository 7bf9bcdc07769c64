"""One live connection to an MCP server, through the official `mcp` SDK's Client (stdio through
our own transport, `stdio.py`).

The SDK's transports are anyio context managers that must be entered and left in one task, so
each connection runs in its own task that holds them open until `stop`. Calls from other tasks
go through the SDK's client, whose requests are matched to answers by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

import httpx2
import mcp_types
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp import Client

from ..tools.runtime.child_env import RUN_MARKER
from ..tools.runtime.descendants import kill_marked, run_id
from ..tools.runtime.groupwatch import group_watch
from .config import ServerConfig
from .stdio import Limits, stdio_transport

log = logging.getLogger("codecompanion.mcp")
T = TypeVar("T")

# Servers that page their tool list endlessly must not hang the start.
_MAX_PAGES = 50
_CONNECT_TIMEOUT = 30.0
# A tool's answer beyond this many characters is cut (the chat caps results again, shorter),
# as a command's output is kept to 1,000,000 bytes.
MAX_RESULT_CHARS = 1_000_000
# A server's message over this many bytes is parsed in a process of its own (and cut there),
# and one over MAX_MESSAGE_BYTES is dropped with an error.
INLINE_BYTES = 1_000_000
MAX_MESSAGE_BYTES = 128_000_000


class ConnectionLost(Exception):
    """The server went away (its process exited, or its HTTP endpoint closed the session)."""


class Unreadable(Exception):
    """The server sent a message the SDK cannot read (the request it answers waits forever)."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server lists: its name, description and input schema (plain data)."""

    name: str
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class McpCallOutput:
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
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.config = config
        self._env = dict(env)
        self._headers = dict(headers)
        self._errlog = errlog
        self._ssl = ssl_context
        self._limits = Limits(INLINE_BYTES, max_message_bytes, MAX_RESULT_CHARS)
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.tools: list[ToolInfo] = []
        # Set when the SDK reports a message it could not read; replaced by a fresh one.
        self._unreadable: asyncio.Future[str] | None = None
        # Marks the server's processes as a tool run's are marked: what it starts (a `setsid`
        # grandchild too) is killed when it stops, and by the watchdog when the host dies.
        self._marker: str | None = None

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
        watch = group_watch()
        watch.start()
        self._marker = run_id(watch.token)
        env = {**self._env, RUN_MARKER: self._marker}
        params = StdioServerParameters(
            command=command, args=list(args), env=env, cwd=self.config.cwd
        )
        return None, stdio_transport(params, self._errlog, self._limits)

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Hold the transport open until `stop` (entered and left in this one task)."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                http, transport = self._transport()
                if http is not None:
                    await stack.enter_async_context(http)
                client = Client(
                    transport, raise_exceptions=False, cache=None, message_handler=self._message
                )
                self._client = await stack.enter_async_context(client)
                self.tools = await self._unless_unreadable(self._list_tools(self._client))
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

    async def _message(self, message: Any) -> None:
        """The SDK's notifications and transport faults: a fault ends the requests waiting."""
        if isinstance(message, Exception):
            reason = " ".join(str(message).split())[:200] or type(message).__name__
            log.warning("%s: the server sent a message that cannot be read: %s",
                        self.config.name, reason)  # fmt: skip
            waiting = self._unreadable
            self._unreadable = None
            if waiting is not None and not waiting.done():
                waiting.set_result(reason)

    async def _unless_unreadable(self, work: Coroutine[Any, Any, T]) -> T:
        """Await `work`, ending it with Unreadable as soon as the server sends an unreadable
        message (its answer to `work` may be that message: the SDK would wait until the
        timeout for an answer that never comes)."""
        if self._unreadable is None or self._unreadable.done():
            self._unreadable = asyncio.get_running_loop().create_future()
        fault = self._unreadable
        task = asyncio.ensure_future(work)
        racing: set[asyncio.Future[Any]] = {task, fault}
        done, _ = await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise Unreadable(f"the server sent an answer that cannot be read ({fault.result()})")

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

    async def call(self, tool: str, args: dict[str, Any], timeout: float | None) -> McpCallOutput:
        """Call `tool`: ConnectionLost when the server is gone; an MCP error is an error outcome."""
        client = self._client
        if client is None or not self.alive:
            raise ConnectionLost("the server is not running")
        try:
            result = await self._unless_unreadable(
                client.call_tool(tool, args, read_timeout_seconds=timeout)
            )
        except Unreadable as exc:
            return McpCallOutput(f"MCP error: {exc}", True)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ConnectionLost(str(exc)) from None
            return McpCallOutput(f"MCP error {exc.code}: {exc}", True)
        if not isinstance(result, mcp_types.CallToolResult):
            return McpCallOutput(f"unexpected MCP result: {type(result).__name__}", True)
        text = result_text(result)
        if len(text) > MAX_RESULT_CHARS:
            cut = len(text) - MAX_RESULT_CHARS
            text = text[:MAX_RESULT_CHARS] + f"\n[{cut:,} more characters of the answer cut]"
        return McpCallOutput(text, bool(result.is_error))

    async def stop(self) -> None:
        """Leave the transport (the SDK ends the process or the HTTP session) and wait for it."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (asyncio.TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if self._marker is not None:
            kill_marked(self._marker)  # what the server left running (a setsid grandchild)


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
