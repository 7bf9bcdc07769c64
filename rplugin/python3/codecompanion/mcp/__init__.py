"""MCP servers' tools: config, lazily started connections (official `mcp` SDK), tools from them.

Only `session.py` and its stdio transport (`stdio.py`) import the SDK, and only when a server
first starts, so a host whose chats never use MCP never pays for importing it.
"""

from __future__ import annotations

from .config import ServerConfig, check_mcp, parse_server
from .manager import McpError, McpManager

__all__ = ["McpError", "McpManager", "ServerConfig", "check_mcp", "parse_server"]
