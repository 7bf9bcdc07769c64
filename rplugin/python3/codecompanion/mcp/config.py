"""The `mcp = {"servers": {...}}` setting: one ServerConfig per server, checked without starting it.

A server is a dict (`cmd` for stdio, or `url` for streamable HTTP) or a function returning one,
called when the server is first needed. `env` and `headers` values may be `env:VAR` or
`cmd:command` (resolved like adapter keys when the server starts); they never appear in a repr
or a log line.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..outside import UserValue

NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
SERVER_KEYS = frozenset(
    {"cmd", "env", "cwd", "url", "headers", "requires_approval", "tools", "timeout", "description"}
)
TOOL_KEYS = frozenset({"requires_approval", "enabled"})

Transport = Literal["stdio", "http"]


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: how to reach it and how its tools are offered."""

    name: str
    cmd: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    requires_approval: bool = True
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    timeout: float | None = None
    description: str = ""

    @property
    def transport(self) -> Transport:
        """`stdio` for a command, `http` for a URL (streamable HTTP)."""
        return "http" if self.url else "stdio"

    def tool_opts(self, tool: str) -> Mapping[str, Any]:
        """The per-tool settings (`tools = {name: {...}}`) of `tool`."""
        return self.tools.get(tool, {})


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{what} must be a dict of strings")
    return dict(value)


def _command(value: Any) -> tuple[str, ...]:
    parts = shlex.split(value) if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ValueError("cmd must be a non-empty list of strings (or a command line)")
    if not all(isinstance(part, str) for part in parts):
        raise ValueError("cmd must be a list of strings")
    # The program may start with `~` (a server installed in the home folder), as in a shell.
    return (os.path.expanduser(parts[0]), *parts[1:])


def _tools(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping):
        raise ValueError("tools must be a dict of tool name → settings")
    kept: dict[str, dict[str, Any]] = {}
    for tool, settings in value.items():
        if not isinstance(settings, Mapping):
            raise ValueError(f"tools[{tool!r}] must be a dict")
        unknown = set(settings) - TOOL_KEYS
        if unknown:
            raise ValueError(f"tools[{tool!r}]: unknown key(s) {', '.join(sorted(unknown))}")
        kept[str(tool)] = dict(settings)
    return kept


def parse_server(name: str, value: UserValue) -> ServerConfig:
    """A ServerConfig from the config file's dict; ValueError says what is wrong in one line."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"server name {name!r}: use 1-32 letters, digits, '_' or '-'")
    if not isinstance(value, Mapping):
        raise ValueError(f"server {name}: expected a dict, got {type(value).__name__}")
    unknown = set(value) - SERVER_KEYS
    if unknown:
        raise ValueError(f"server {name}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    if ("cmd" in value) == ("url" in value):
        raise ValueError(f"server {name}: set either cmd (stdio) or url (streamable HTTP)")
    try:
        return _server(name, value)
    except ValueError as exc:
        raise ValueError(f"server {name}: {exc}") from None


def _server(name: str, value: Mapping[str, Any]) -> ServerConfig:
    url = value.get("url")
    if url is not None and not (isinstance(url, str) and re.match(r"https?://", url)):
        raise ValueError("url must be an http(s):// URL")
    timeout = value.get("timeout")
    if timeout is not None and not (
        isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
    ):
        raise ValueError("timeout must be a positive number of seconds")
    approval = value.get("requires_approval", True)
    if not isinstance(approval, bool):
        raise ValueError("requires_approval must be true or false")
    return ServerConfig(
        name=name,
        cmd=_command(value["cmd"]) if "cmd" in value else (),
        url=url,
        env=_strings(value.get("env", {}), "env"),
        headers=_strings(value.get("headers", {}), "headers"),
        cwd=str(value["cwd"]) if value.get("cwd") is not None else None,
        requires_approval=approval,
        tools=_tools(value.get("tools", {})),
        timeout=float(timeout) if timeout is not None else None,
        description=str(value.get("description") or ""),
    )


def check_mcp(value: UserValue) -> tuple[dict[str, Any] | None, list[str]]:
    """The config file's `mcp` setting: the valid servers kept (functions kept as they are)."""
    if not isinstance(value, Mapping) or set(value) - {"servers"}:
        return None, ['mcp must be a dict {"servers": {name: server}}']
    servers = value.get("servers", {})
    if not isinstance(servers, Mapping):
        return None, ["mcp['servers'] must be a dict of server name → server"]
    kept: dict[str, Any] = {}
    errors: list[str] = []
    for name, server in servers.items():
        try:
            if callable(server):  # checked when first called
                if not isinstance(name, str) or not NAME.fullmatch(name):
                    parse_server(name, {})
                kept[name] = server
            else:
                parse_server(name, server)
                kept[name] = server
        except ValueError as exc:
            errors.append(f"mcp: {exc}")
    return {"servers": kept}, errors
