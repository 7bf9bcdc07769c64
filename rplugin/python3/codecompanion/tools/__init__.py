"""Tools the model can call: the Tool type and the `@tool` decorator for user config files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .compat.decorator import tool
from .compat.table import Tool

if TYPE_CHECKING:
    from .model.registry import ToolRegistry

__all__ = ["Tool", "tool", "tool_registry"]


def tool_registry(
    user_tools: Mapping[str, Any] | None = None,
    groups: Mapping[str, Any] | None = None,
    *,
    tool_opts: Mapping[str, Mapping[str, Any]] | None = None,
) -> ToolRegistry:
    """The builtin tools and the user's (`tools` and `groups` of the config file)."""
    from .builtin import GROUPS, SUMMARIES, load_builtins
    from .model.registry import ToolRegistry

    return ToolRegistry(
        user_tools,
        groups,
        builtins=load_builtins,
        tool_opts=tool_opts,
        listing=(SUMMARIES, GROUPS),
    )
