"""Hooks: commands (or Python functions) run on a chat's events — before and after a tool call,
on a submitted prompt, when the model stops, before compaction, when a chat starts — with
Claude Code's event names, JSON shapes and exit codes."""

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
