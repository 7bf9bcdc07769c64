"""What a project's own settings for an agent let the agent do without asking.

Qwen Code and Claude Code read permission rules from files in the project they work in; a call
those rules allow runs without a `session/request_permission`, so the chat never sees it before
it runs (and an agent that runs its own commands runs it outside the chat's sandbox). A cloned
repository can ship such a file: the chat says what it grants when the agent starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

# The approval modes that let an agent act without asking (Qwen Code's `tools.approvalMode`,
# Claude Code's `permissions.defaultMode`).
UNASKED_MODES = frozenset({"yolo", "auto-edit", "bypassPermissions", "acceptEdits"})
SHOWN = 4  # rules named in the line; the rest counted


def project_grants(cwd: Path, files: tuple[str, ...]) -> list[str]:
    """One line per file of `files` (relative to the project) that lets the agent act without
    asking: the rules or the mode it sets, or that it could not be read."""
    lines: list[str] = []
    for name in files:
        path = cwd / name
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            lines.append(f"{name} (unreadable: what it allows is unknown)")
            continue
        try:
            data = json.loads(text)
        except ValueError:
            lines.append(f"{name} (not plain JSON: what it allows is unknown)")
            continue
        granted = grants(data)
        if granted:
            more = f" (+{len(granted) - SHOWN})" if len(granted) > SHOWN else ""
            lines.append(f"{name} allows {', '.join(granted[:SHOWN])}{more}")
    return lines


def grants(data: object) -> list[str]:
    """The allow rules and the no-asking modes one settings document sets."""
    if not isinstance(data, Mapping):
        return []
    permissions = _table(data, "permissions")
    tools = _table(data, "tools")
    found = [*_texts(permissions.get("allow")), *_texts(tools.get("allowed"))]
    for mode in (permissions.get("defaultMode"), tools.get("approvalMode")):
        if isinstance(mode, str) and mode in UNASKED_MODES:
            found.append(f"mode {mode}")
    return found


def _table(data: Mapping[object, object], key: str) -> Mapping[object, object]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _texts(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]
