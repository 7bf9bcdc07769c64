"""The SDK-built HTTP MCP server as a fixture."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.mcp_servers import HttpServer, free_port, start_http_server


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    port = free_port()
    process = start_http_server(port)
    server = HttpServer(f"http://127.0.0.1:{port}/mcp", process, port)
    try:
        yield server
    finally:
        server.process.kill()
        server.process.wait()
