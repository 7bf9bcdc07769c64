"""Hooks: commands (or Python functions) run on a chat's events — before and after a tool call,
on a submitted prompt, when the model stops, before compaction, when a chat starts — with
Claude Code's event names, JSON shapes and exit codes.

The names below load their module when first used: a chat without hooks reads the table's
event names (subagents do) without loading the hooks' runner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .chat_hooks import ChatHooks, hooks_of
    from .table import EVENTS, HookTable, read_table, settings_table
    from .verdict import Verdict

__all__ = [
    "EVENTS",
    "ChatHooks",
    "HookTable",
    "Verdict",
    "hooks_of",
    "read_table",
    "settings_table",
]


def __getattr__(name: str) -> Any:
    """One of `__all__`, from its module (imported now if it was not)."""
    if name in ("ChatHooks", "hooks_of"):
        from . import chat_hooks as home
    elif name in ("EVENTS", "HookTable", "read_table", "settings_table"):
        from . import table as home  # type: ignore[no-redef]
    elif name == "Verdict":
        from . import verdict as home  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(home, name)
