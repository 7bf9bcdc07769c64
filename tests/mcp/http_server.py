"""A streamable HTTP MCP server built with the SDK for the tests: `http_server.py PORT TOKEN`.

Every request must carry `Authorization: Bearer TOKEN` (the client's configured headers).
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

server = MCPServer("testhttp")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def fail(message: str) -> str:
    """Always fails with `message`."""
    raise ToolError(message)


@server.tool()
def picture() -> list[Any]:
    """A caption, an image and an embedded resource."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 64).decode()
    resource = TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="x")
    return [
        TextContent(type="text", text="a red square"),
        ImageContent(type="image", data=png, mime_type="image/png"),
        EmbeddedResource(type="resource", resource=resource),
    ]


@server.tool()
def crash() -> str:
    """Exits the server process at once."""
    os._exit(3)


def main() -> None:
    port, token = int(sys.argv[1]), sys.argv[2]
    app = server.streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
