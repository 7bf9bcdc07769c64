"""The chat's configured MCP servers as `session/new` passes them to an agent."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from ..mcp.config import parse_server
from .connection import McpServer


async def mcp_servers(
    configured: Mapping[str, Any], resolve: Callable[[str], Awaitable[str]], http: bool
) -> tuple[list[McpServer], list[str]]:
    """Each server (its `env:`/`cmd:` values resolved); HTTP ones only when the agent takes
    them. Returns the servers and the names left out."""
    servers: list[McpServer] = []
    skipped: list[str] = []
    for name, value in (configured.get("servers") or {}).items():
        if callable(value):
            value = value()
        try:
            server = parse_server(name, value)
        except ValueError:
            continue
        if server.url:
            if not http:
                skipped.append(name)
                continue
            headers = [
                HttpHeader(name=k, value=await resolve(v)) for k, v in server.headers.items()
            ]
            servers.append(HttpMcpServer(type="http", name=name, url=server.url, headers=headers))
            continue
        env = [EnvVariable(name=k, value=await resolve(v)) for k, v in server.env.items()]
        program, *args = server.cmd
        servers.append(McpServerStdio(name=name, command=program, args=list(args), env=env))
    return servers, skipped


def shown(server: McpServer) -> str:
    """One server as a log line names it (never its secrets)."""
    if isinstance(server, HttpMcpServer):
        return f"{server.name} ({server.url})"
    return f"{server.name} ({shlex.join([server.command, *server.args])})"
