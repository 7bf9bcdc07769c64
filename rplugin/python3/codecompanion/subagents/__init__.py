"""Subagents: definitions found in `.claude/agents/`, `.agents/agents/` and the config file, and
the `agent` tool's runs: a fresh context, its own tools and adapter, one answer back."""

from .chat_agents import AgentOptions, AgentReply, ChatAgents, agents_of
from .definitions import GENERAL, AgentDefinition, Definitions, discover

__all__ = [
    "GENERAL",
    "AgentDefinition",
    "AgentOptions",
    "AgentReply",
    "ChatAgents",
    "Definitions",
    "agents_of",
    "discover",
]
