"""What `:checkhealth codecompanion` asks the host (never includes a key)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..workspace import Workspace


def dependencies() -> list[str]:
    """The runtime dependencies as the installed package declares them (extras left out)."""
    try:
        requires = importlib.metadata.requires("codecompanion") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names: list[str] = []
    for line in requires:
        spec, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0]
        if name and name not in names:
            names.append(name)
    return names


def agent_files(workspace: Workspace, cwd: Path) -> dict[str, Any]:
    """The skills and hooks a chat opened in `cwd` would have, and the lines saying what was
    skipped."""
    from ..subagents import discover

    found = workspace.skills(cwd).found()
    table = workspace.hook_table(cwd)
    agents = discover(cwd, workspace.config.agents)
    hooks = [f"{event}: {len(table.hooks(event))}" for event in table.events]
    return {
        "skills": [f"{skill.name} ({skill.label})" for skill in found.skills],
        "agents": [f"{agent.name} ({agent.source})" for agent in agents.agents],
        "hooks": hooks,
        "problems": [*found.problems, *agents.problems, *table.problems],
    }


def checks_report(workspace: Workspace, cwd: Path) -> list[dict[str, Any]]:
    """The after-edit checks of the project at `cwd`, and whether the user allowed them."""
    checks = workspace.project_checks(cwd)
    listed = checks.listed()
    answer = checks.trust.answer(checks.root, listed) if listed else None
    return [
        {"glob": c.glob, "command": c.command, "origin": c.origin, "allowed": answer}
        for c in listed
    ]


def report(workspace: Workspace, cwd: Path | None = None) -> dict[str, Any]:
    """Versions, config state, the default adapter, whether its key resolves, MCP servers,
    the skills a chat in `cwd` would have and the after-edit checks of its project."""
    deps: list[dict[str, str | None]] = []
    for name in dependencies():
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
        "mcp": workspace.mcp.status() if workspace.mcp is not None else [],
        "tls": workspace.trust().source,
        "plugins": [f"{key} ({source})" for key, source in workspace.plugins.sources.items()],
        "plugin_errors": list(workspace.plugins.errors),
        "agent_files": agent_files(workspace, cwd or Path.cwd()),
        "checks": checks_report(workspace, cwd or Path.cwd()),
    }
    found = workspace.sandbox_detector()()
    permissions = workspace.permissions()
    result["sandbox"] = {
        "kind": found.kind,
        "reason": found.reason,
        "abi": found.abi,
        "enabled": permissions.sandbox,
        "mode": permissions.mode,
        "network": permissions.network,
        "narrowed": workspace.user_places().not_a_project(str(cwd or Path.cwd())),
    }
    adapter = workspace.default_adapter()
    if adapter:
        from ..adapters import key_problem  # adapters (and httpx) load on first use

        settings = workspace.settings(adapter)
        result.update(adapter=adapter, model=settings.model)
        problem = key_problem(workspace.keys, settings.api_key, adapter, workspace.plugins.adapters)
        result.update(key_ok=problem is None, key_problem=problem)
    return result
