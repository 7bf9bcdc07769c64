"""Tools and adapters from installed packages, found through entry points (like llm's plugins).

A package declares, in its pyproject.toml:

    [project.entry-points."codecompanion.tools"]
    word_count = "cc_example:word_count"        # a tool, in any form the config file takes

    [project.entry-points."codecompanion.adapters"]
    echo = "cc_example:EchoAdapter"             # a subclass of adapters.http_adapter.HTTPAdapter

The entry point's name is the tool's or the adapter's name. The user's config file wins over a
plugin of the same name, and a plugin never replaces a builtin adapter. A plugin that fails to
load is one line in the log and in :checkhealth; the others still load.
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("codecompanion.plugins")

TOOLS_GROUP = "codecompanion.tools"
ADAPTERS_GROUP = "codecompanion.adapters"


@dataclass
class Plugins:
    """What the installed packages provide, and one line per entry point that failed."""

    tools: dict[str, Any] = field(default_factory=dict)
    adapters: dict[str, type[Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # "tool:name" → distribution
    errors: list[str] = field(default_factory=list)


def _entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    return sorted(importlib.metadata.entry_points(group=group), key=lambda ep: ep.name)


def _source(entry: importlib.metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value


def load_plugins(builtin_adapters: Mapping[str, Any] | None = None) -> Plugins:
    """Load every `codecompanion.tools` and `codecompanion.adapters` entry point."""
    from .adapters.http_adapter import HTTPAdapter
    from .tools.model.tool import Tool

    found = Plugins()
    for entry in _entry_points(TOOLS_GROUP):
        try:
            value = entry.load()
            Tool.coerce(value.get("callback", value) if _is_entry(value) else value, entry.name)
        except Exception as exc:
            found.errors.append(f"plugin tool {entry.name} ({entry.value}): {exc}")
            continue
        found.tools[entry.name] = value
        found.sources[f"tool:{entry.name}"] = _source(entry)
    for entry in _entry_points(ADAPTERS_GROUP):
        try:
            if entry.name in (builtin_adapters or {}):
                raise ValueError("a builtin adapter has this name")
            value = entry.load()
            if not (isinstance(value, type) and issubclass(value, HTTPAdapter)):
                raise TypeError("not a subclass of codecompanion's HTTPAdapter")
        except Exception as exc:
            found.errors.append(f"plugin adapter {entry.name} ({entry.value}): {exc}")
            continue
        found.adapters[entry.name] = value
        found.sources[f"adapter:{entry.name}"] = _source(entry)
    for line in found.errors:
        log.error("%s", line)
    return found


def _is_entry(value: Any) -> bool:
    from .tools.model.registry import is_entry

    return is_entry(value) and "callback" in value
