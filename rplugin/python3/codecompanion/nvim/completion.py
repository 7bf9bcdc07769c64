"""What Lua completes without asking the host: `@` items, adapter names, models per adapter."""

from __future__ import annotations

from typing import Any

from ..workspace import Workspace


def completion_payload(workspace: Workspace) -> dict[str, Any]:
    """`@{tool}`/`@{group}` items, and the adapter names and known models for the command line."""
    from ..adapters import PROVIDERS

    names = workspace.adapter_names()
    models: dict[str, list[str]] = {}
    for name in names:
        builtin = PROVIDERS.get(name)
        plugin = workspace.plugins.adapters.get(name)
        known = [builtin.model if builtin else getattr(plugin, "default_model", None)]
        try:
            known.insert(0, workspace.settings(name).model)
        except (TypeError, ValueError):  # a malformed adapter entry in the config file
            pass
        models[name] = [m for m in dict.fromkeys(known) if isinstance(m, str) and m]
    agents = sorted(set(workspace.external_agents()) - set(names))  # `adapter=<agent>` opens one
    return {
        "items": workspace.registry.completion_items(),
        "meta": {"adapters": [*names, *agents], "models": models},
    }
