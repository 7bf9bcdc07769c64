"""An SDK-built stdio MCP server behind a filter that garbles its answers:
`garbling_server.py [--list] [--tool NAME]...`.

The filter turns the marker text into a lone-surrogate escape (valid JSON that the SDK's
reader rejects); with --list the marker is in a tool's description, so the tool list itself
cannot be read. `--tool NAME` adds a tool of that name (to make names collide).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

MARKER = "GARBLE_ME_HERE"


def serve() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("garbling")
    listed = "--list" in sys.argv

    @server.tool(description=f"Echo {MARKER}" if listed else "Echo the text.")
    def echo(text: str) -> str:
        return text

    for index, word in enumerate(sys.argv):
        if word == "--tool":  # an extra tool of this name, to make names collide
            name = sys.argv[index + 1]
            server.tool(name=name, description="Says which tool it is.")(_served_by(name))

    @server.tool()
    def spawn(tag: str) -> str:
        """Leave a process running in a session of its own (as a setsid grandchild does)."""
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)", tag], start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return "spawned"

    @server.tool()
    def big(megabytes: int) -> str:
        """A long answer."""
        return "x" * (megabytes * 1_000_000)

    server.run("stdio")


def _served_by(name: str) -> Callable[[], str]:
    def served() -> str:
        return f"served by {name}"

    return served


def proxy() -> None:
    """Run the server, passing stdin through and garbling the marker in its stdout."""
    child = subprocess.Popen(
        [sys.executable, __file__, "serve", *sys.argv[1:]], stdout=subprocess.PIPE
    )
    assert child.stdout is not None
    out = sys.stdout.buffer
    for line in child.stdout:
        out.write(line.replace(MARKER.encode(), b"\\ud800"))
        out.flush()


if __name__ == "__main__":
    serve() if "serve" in sys.argv else proxy()
