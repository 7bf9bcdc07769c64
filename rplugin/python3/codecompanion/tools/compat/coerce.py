"""A tool from whatever a config gives: a ToolSpec (a Tool, a builtin), a dict in CodeCompanion's
shape, or a function (decorated with `@tool` or not)."""

from __future__ import annotations

from dataclasses import replace

from ..model.contract import ToolSpec
from .decorator import tool
from .table import Tool


def coerce(value: object, name: str | None = None) -> ToolSpec:
    """The tool `value` is, named `name` when given; TypeError or ValueError when it is none."""
    if isinstance(value, ToolSpec):
        return replace(value, name=name) if name and name != value.name else value
    if isinstance(value, dict):
        return Tool.from_dict(value, name)
    made = getattr(value, "__codecompanion_tool__", None)
    if isinstance(made, ToolSpec):
        return replace(made, name=name) if name else made
    if callable(value):
        made_now: Tool = tool(value)
        return made_now if name is None else replace(made_now, name=name)
    raise TypeError(f"cannot make a tool from {type(value).__name__}")
