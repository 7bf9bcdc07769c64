"""The `acp = {name: agent}` setting and the presets: how each external agent is started.

An agent is a command speaking ACP on its stdio. A preset names the usual command of a known
agent and the variables it reads its credentials from; the config file overrides a preset's
keys or adds agents of its own. `env` values may be `env:VAR` or `cmd:command` (resolved like
adapter keys when the agent starts); they never appear in a repr or a log line.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..outside import UserValue

NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
AGENT_KEYS = frozenset({"cmd", "env", "pass_env", "description", "auth_method", "mcp"})


@dataclass(frozen=True)
class AgentSettings:
    """One external agent: its command, its environment and how it logs in."""

    name: str
    cmd: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Variables of the editor's environment the agent gets when they are set (credentials,
    # its own settings): the agent's environment is otherwise the short list in `process.py`.
    pass_env: tuple[str, ...] = ()
    description: str = ""
    auth_method: str | None = None  # the `authenticate` method to use when the agent asks
    mcp: bool = True  # pass the chat's MCP servers in session/new
    # Files in the project where the agent reads rules that let it act without asking (presets).
    project_settings: tuple[str, ...] = ()


def _preset(
    cmd: tuple[str, ...], description: str, *pass_env: str, project: tuple[str, ...] = ()
) -> dict[str, Any]:
    preset = {"cmd": list(cmd), "description": description, "pass_env": list(pass_env)}
    return {**preset, "project_settings": list(project)} if project else preset


PRESETS: dict[str, dict[str, Any]] = {
    "claude_code": _preset(
        ("claude-code-acp",),
        "Claude Code through Zed's adapter (npm @zed-industries/claude-code-acp)",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        project=(".claude/settings.json", ".claude/settings.local.json", ".mcp.json"),
    ),
    "codex": _preset(
        ("codex-acp",), "OpenAI Codex (npm @zed-industries/codex-acp)", "OPENAI_API_KEY"
    ),
    "gemini_cli": _preset(
        ("gemini", "--experimental-acp"),
        "Gemini CLI (npm @google/gemini-cli)",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        project=(".gemini/settings.json",),
    ),
    "qwen_code": _preset(
        ("qwen", "--acp"),
        "Qwen Code (npm @qwen-code/qwen-code)",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        project=(".qwen/settings.json",),
    ),
    "opencode": _preset(("opencode", "acp"), "opencode (npm opencode-ai)"),
    "goose": _preset(("goose", "acp"), "Goose (block/goose)"),
    "mistral_vibe": _preset(
        ("vibe-acp",), "Mistral Vibe (PyPI mistral-vibe)", "MISTRAL_API_KEY", "VIBE_HOME"
    ),
}


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{what} must be a dict of strings")
    return dict(value)


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of variable names")
    return tuple(value)


def _command(value: Any) -> tuple[str, ...]:
    parts = shlex.split(value) if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ValueError("cmd must be a non-empty list of strings (or a command line)")
    if not all(isinstance(part, str) and part for part in parts):
        raise ValueError("cmd must be a list of non-empty strings")
    return (os.path.expanduser(parts[0]), *parts[1:])


def parse_agent(name: str, value: Any) -> AgentSettings:
    """An agent from the config's entry over its preset; ValueError says what is wrong, in one
    line naming the agent."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"acp: agent name {name!r}: use 1-32 letters, digits, '_' or '-'")
    if not isinstance(value, Mapping):
        raise ValueError(f"acp: agent {name}: expected a dict, got {type(value).__name__}")
    unknown = set(value) - AGENT_KEYS
    if unknown:
        keys = ", ".join(sorted(map(str, unknown)))
        raise ValueError(f"acp: agent {name}: unknown key(s) {keys}")
    merged = {**PRESETS.get(name, {}), **value}
    if "cmd" not in merged:
        raise ValueError(f"acp: agent {name}: set cmd (the command that speaks ACP on stdio)")
    try:
        return _agent(name, merged)
    except ValueError as exc:
        raise ValueError(f"acp: agent {name}: {exc}") from None


def _agent(name: str, value: Mapping[str, Any]) -> AgentSettings:
    auth = value.get("auth_method")
    if auth is not None and not isinstance(auth, str):
        raise ValueError("auth_method must be the id of one of the agent's login methods")
    mcp = value.get("mcp", True)
    if not isinstance(mcp, bool):
        raise ValueError("mcp must be true or false")
    return AgentSettings(
        name=name,
        cmd=_command(value["cmd"]),
        env=_strings(value.get("env", {}), "env"),
        pass_env=_names(value.get("pass_env", []), "pass_env"),
        description=str(value.get("description") or ""),
        auth_method=auth,
        mcp=mcp,
        project_settings=tuple(value.get("project_settings", ())),
    )


def check_acp(value: UserValue) -> tuple[dict[str, Any] | None, list[str]]:
    """The config file's `acp` setting: the valid agents kept, one line per invalid one."""
    if not isinstance(value, Mapping):
        return None, [f"acp must be a dict of agent name → settings, not {type(value).__name__}"]
    kept: dict[str, Any] = {}
    errors: list[str] = []
    for name, agent in value.items():
        try:
            parse_agent(name, agent)
            kept[name] = dict(agent)
        except ValueError as exc:
            errors.append(str(exc))
    return kept, errors


def agents(configured: Mapping[str, Any]) -> dict[str, AgentSettings]:
    """Every agent a chat can use: the presets, with the config file's entries over them."""
    found: dict[str, AgentSettings] = {}
    for name in sorted({*PRESETS, *configured}):
        try:
            found[name] = parse_agent(name, configured.get(name, {}))
        except ValueError:
            continue  # reported when the config file was read
    return found
