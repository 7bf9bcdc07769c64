"""An MCP server's tools as the plugin's Tools: `<server>_<tool>`, cleaned schema, approval."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..tools.model.function_tool import Failure, FunctionOutput, NativeTool
from .schema import clean_schema

if TYPE_CHECKING:
    from ..tools.model.contract import ToolContext
    from ..tools.model.registry import ToolEntry, ToolRegistry
    from .config import ServerConfig
    from .manager import McpManager
    from .session import ToolInfo

GROUP_PREFIX = "mcp:"


def tool_name(server: str, tool: str) -> str:
    """`<server>_<tool>`, with characters providers reject replaced and cut to 64."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]


def group_name(server: str) -> str:
    """The group that offers every tool of `server`: `mcp:<server>`."""
    return f"{GROUP_PREFIX}{server}"


def make_tool(manager: McpManager, config: ServerConfig, info: ToolInfo) -> NativeTool:
    """A tool that calls `info.name` on the server; every call gets one result."""
    from .manager import McpError

    server, remote = config.name, info.name
    name = tool_name(server, remote)

    async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
        try:
            outcome = await manager.call(server, remote, args)
            text = outcome.text or "(no output)"
        except McpError as exc:
            outcome, text = None, str(exc)
        if outcome is None or outcome.is_error:
            raise Failure(f"The {ctx.call.name} tool failed:\n{text}", None)
        return FunctionOutput(text, None)

    settings = config.tool_opts(remote)
    approval = settings.get("requires_approval", config.requires_approval)
    description = info.description.strip() or f"The {remote} tool of the {server} MCP server."
    return NativeTool(
        name=name,
        run=run,
        schema={
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": clean_schema(info.schema),
            },
        },
        opts={
            "requires_approval": bool(approval),
            # A server's tools do what the server decides: never run them on a blanket yes.
            "allowed_in_yolo_mode": not approval,
            "mcp_server": server,
            "mcp_tool": remote,  # with the server: the name hooks written for Claude Code match
        },
    )


def enabled_infos(config: ServerConfig, infos: list[ToolInfo]) -> list[ToolInfo]:
    """The listed tools minus those the config disables (`tools = {name: {enabled = False}}`)."""
    return [info for info in infos if config.tool_opts(info.name).get("enabled", True) is not False]


def register_servers(manager: McpManager, registry: ToolRegistry) -> None:
    """Add `mcp:<server>` to the registry for each server: its tools are made when first needed."""
    from ..tools.model.registry import Group

    for server in manager.names():
        config = manager.config(server)
        transport = config.transport if config else "on demand"
        description = (config.description if config else "") or f"MCP server {server} ({transport})"
        group = Group(
            name=group_name(server),
            tools=[],
            description=description,
            prompt=f"the tools of the {server} MCP server",
        )
        registry.add_lazy_group(group, _loader(manager, server))


def _loader(manager: McpManager, server: str) -> Any:
    from ..tools.model.registry import ToolEntry, summary

    async def load() -> list[ToolEntry]:
        config, infos = await manager.tool_infos(server)
        entries = []
        for info in enabled_infos(config, infos):
            tool = make_tool(manager, config, info)
            entries.append(
                ToolEntry(
                    name=tool.name,
                    tool=tool,
                    description=summary(tool.description),
                    opts=dict(tool.opts),
                    visible=False,  # offered through @{mcp:<server>}, not one by one
                )
            )
        return entries

    return load
