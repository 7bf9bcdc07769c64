"""What a project's own settings for an agent let the agent do without asking.

Qwen Code, Claude Code and Gemini CLI read settings from files in the project they work in: a call
their permission rules allow runs without a `session/request_permission`, so the chat never sees
it before it runs (an agent that runs its own commands runs it outside the chat's sandbox), and
the MCP servers and hooks they name are started by the agent itself. A cloned repository can
ship such a file: before the agent starts, the user is told what the file grants
and asked whether to start it (YOLO only tells).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..chat.driver import Session
from ..ports import ApprovalRequest
from .connection import AgentError

# The approval modes that let an agent act without asking (Qwen Code's `tools.approvalMode`,
# Claude Code's `permissions.defaultMode`).
UNASKED_MODES = frozenset({"yolo", "auto-edit", "bypassPermissions", "acceptEdits"})
SHOWN = 4  # rules named in the line; the rest counted


async def confirm_start(chat: Session, agent: str, files: tuple[str, ...]) -> None:
    """Tell what the project lets `agent` do without asking and ask whether to start it;
    AgentError (one line) when the user does not."""
    lines = project_grants(Path(chat.tools.cwd), files)
    if not lines:
        return
    said = f"{agent} acts without asking where the project's {'; '.join(lines)}"
    chat.view.notify(said, "warn")
    if chat.tools.yolo or chat.tools.mode == "yolo":
        return
    request = ApprovalRequest(
        chat_id=chat.id,
        tool_name=f"{agent} · start",
        call_id=f"{agent}-start",
        prompt=f"Start {agent}? The project lets it act without asking",
        arguments={"project": "\n".join(lines)},
        choices=("approve", "reject"),
    )
    decision = await chat.tools.approver.ask(request)
    if decision.choice != "approve":
        raise AgentError(f"{agent} not started: the project's settings let it act without asking")


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
            lines.append(f"{name} {'; '.join(granted)}")
    return lines


def grants(data: object) -> list[str]:
    """What one settings document lets the agent do unasked, as phrases: the allow rules and
    no-asking modes, the MCP servers it starts, the hooks it runs."""
    if not isinstance(data, Mapping):
        return []
    permissions = _table(data, "permissions")
    tools = _table(data, "tools")
    allowed = [*_texts(permissions.get("allow")), *_texts(tools.get("allowed"))]
    for mode in (permissions.get("defaultMode"), tools.get("approvalMode")):
        if isinstance(mode, str) and mode in UNASKED_MODES:
            allowed.append(f"mode {mode}")
    servers = [
        f"{name} ({server.get('command') or server.get('url') or server.get('httpUrl') or '?'})"
        for name, server in _table(data, "mcpServers").items()
        if isinstance(server, Mapping)
    ]
    hooks = sorted(str(event) for event in _table(data, "hooks"))
    found = [("allows", allowed), ("starts MCP servers", servers), ("runs hooks on", hooks)]
    return [f"{verb} {_few(items)}" for verb, items in found if items]


def _few(items: list[str]) -> str:
    more = f" (+{len(items) - SHOWN})" if len(items) > SHOWN else ""
    return ", ".join(items[:SHOWN]) + more


def _table(data: Mapping[object, object], key: str) -> Mapping[object, object]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _texts(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]
