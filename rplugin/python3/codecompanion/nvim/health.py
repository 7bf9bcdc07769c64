"""What `:checkhealth codecompanion` asks the host (never includes a key)."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from typing import Any

from ..workspace import Workspace

DEPENDENCIES = (
    "pynvim",
    "httpx",
    "httpx-sse",
    "jsonschema",
    "json-repair",
    "rapidfuzz",
    "html2text",
)


def report(workspace: Workspace) -> dict[str, Any]:
    """Versions, config state, the default adapter and whether its key resolves."""
    deps: list[dict[str, str | None]] = []
    for name in DEPENDENCIES:
        try:
            deps.append({"name": name, "version": importlib.metadata.version(name)})
        except importlib.metadata.PackageNotFoundError:
            deps.append({"name": name, "version": None})
    result: dict[str, Any] = {
        "python": sys.version.split()[0],
        "pid": os.getpid(),
        "dependencies": deps,
        "config_file": workspace.config.path,
        "config_error": workspace.config.error,
    }
    adapter = workspace.default_adapter()
    if adapter:
        from ..adapters import key_problem  # adapters (and httpx) load on first use

        settings = workspace.settings(adapter)
        result.update(adapter=adapter, model=settings.model)
        problem = key_problem(workspace.keys, settings.api_key, adapter)
        result.update(key_ok=problem is None, key_problem=problem)
    return result
