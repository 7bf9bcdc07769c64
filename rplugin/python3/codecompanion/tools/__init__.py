"""Tools the model can call: the Tool type and the `@tool` decorator for user config files."""

from __future__ import annotations

from .model.tool import Tool, tool

__all__ = ["Tool", "tool"]
