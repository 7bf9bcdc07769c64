"""Real MCP servers for the tests: the reference PyPI servers (stdio) and an SDK-built HTTP one
(tests/mcp/http_server.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "mcp"
TOKEN = "s3cret-token-for-tests"
TIME_CMD = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
FETCH_CMD = [sys.executable, "-m", "mcp_server_fetch", "--ignore-robots-txt", "--allow-private-ips"]


@dataclass
class HttpServer:
    """A running `http_server.py`: its MCP endpoint and process."""

    url: str
    process: subprocess.Popen[bytes]
    port: int


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(port: int) -> subprocess.Popen[bytes]:
    """Start the SDK server on `port` and wait until it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, str(HERE / "http_server.py"), str(port), TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the test MCP server exited") from None
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the test MCP server did not start")
