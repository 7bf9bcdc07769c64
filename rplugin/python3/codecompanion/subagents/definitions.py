"""Subagent definitions: Markdown files with front matter (`.claude/agents/*.md`,
`.agents/agents/*.md`, `~/.claude/agents/*.md`, as Claude Code reads them) and the config
file's `agents` table.

A definition names the subagent, says when to use it (`description`), lists its tools (our
names or Claude Code's: `Read, Grep, Glob`; none listed: the read-only tools), and may name an
adapter and model (a cheaper or local one) and a permission mode; the Markdown body (or
`prompt`) is its system prompt. Claude Code's model aliases (`sonnet`, `haiku`, `inherit`, ...)
mean the chat's own model here. A broken definition is skipped with one line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, get_args

from ..frontmatter import FrontMatterError, names_field, split, text_field
from ..hooks.table import CLAUDE_NAMES
from ..sandbox.settings import Mode

log = logging.getLogger("codecompanion.subagents")

PROJECT_FOLDERS = (".claude/agents", ".agents/agents")
USER_FOLDERS = ("~/.claude/agents",)
READ_ONLY_TOOLS = ("read_file", "file_search", "grep_search", "get_changed_files")
TOOL = "agent"  # the tool that runs them; never offered to a subagent (one level deep)
MAX_FILE_BYTES = 128_000
_INHERIT = ("inherit", "sonnet", "opus", "haiku", "")
# Claude Code's tool names (and a few of its older ones) as ours.
OUR_NAMES: Mapping[str, str] = {
    **{claude: ours for ours, claude in CLAUDE_NAMES.items()},
    "MultiEdit": "insert_edit_into_file",
    "LS": "file_search",
}
GENERAL_PROMPT = (
    "You look into the user's project for the agent that called you: read and search what "
    "the task needs, then answer with a short, complete summary of what you found (file "
    "names, the facts asked for). The caller sees only your last answer, not the files."
)


@dataclass(frozen=True)
class AgentDefinition:
    """One subagent: what it is for, its tools, adapter, model and mode, its prompt."""

    name: str
    description: str
    prompt: str = GENERAL_PROMPT
    tools: tuple[str, ...] = READ_ONLY_TOOLS
    adapter: str | None = None
    model: str | None = None
    mode: Mode | None = None
    source: str = "builtin"

    def line(self) -> str:
        """The definition as the system prompt lists it: one line."""
        return f"- {self.name}: {self.description} (tools: {', '.join(self.tools) or 'none'})"


GENERAL = AgentDefinition(
    "general",
    "Reads and searches the project for a question and returns a short summary; use it to "
    "look through several files without filling your own context with them.",
)


def from_fields(
    name: str | None, fields: Mapping[str, Any], body: str, source: str
) -> AgentDefinition:
    """A definition from front matter (or a config entry) and its prompt; FrontMatterError
    (one line) when it cannot be one."""
    fields = dict(fields)
    name = name or text_field(fields, "name") or ""
    if not name or any(c.isspace() for c in name) or name == TOOL:
        raise FrontMatterError(f"`name` {name!r} must be one word")
    description = text_field(fields, "description") or ""
    listed = names_field(fields, "tools")
    tools = _our_tools(listed) if listed is not None else READ_ONLY_TOOLS
    model = text_field(fields, "model", required=False)
    mode = fields.get("mode")
    if mode is not None and mode not in get_args(Mode):
        raise FrontMatterError(f"`mode` must be one of {', '.join(get_args(Mode))}")
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body.strip() or GENERAL_PROMPT,
        tools=tools,
        adapter=text_field(fields, "adapter", required=False),
        model=None if model is None or model.lower() in _INHERIT else model,
        mode=mode,
        source=source,
    )


def _our_tools(listed: tuple[str, ...]) -> tuple[str, ...]:
    """The listed tools under our names, once each, never `agent` (one level deep); a name
    the chat does not have is left out when the subagent runs, and said then."""
    tools = (OUR_NAMES.get(name, name) for name in listed)
    return tuple(dict.fromkeys(name for name in tools if name != TOOL))


@dataclass
class Definitions:
    """The subagents found, and one line per definition skipped."""

    agents: list[AgentDefinition] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        """The definition called `name`."""
        return next((agent for agent in self.agents if agent.name == name), None)


def discover(root: Path, configured: Mapping[str, Any], home: Path | None = None) -> Definitions:
    """The config file's subagents, then the project's files, then the user's; the first of a
    name wins; `general` is there unless one of them is called so."""
    found = Definitions()
    configured_into(found, configured)
    home = home or Path.home()
    folders = [(root / name, name) for name in PROJECT_FOLDERS]
    folders += [(home / name[2:], name) for name in USER_FOLDERS]
    for folder, shown in folders:
        for path in _markdown_files(folder):
            label = f"{shown}/{path.name}"
            _keep(found, partial(_read, path, label), label)
    if found.get(GENERAL.name) is None:
        found.agents.append(GENERAL)
    for line in found.problems:
        log.warning("subagents: %s", line)
    return found


def configured_into(found: Definitions, configured: Mapping[str, Any]) -> None:
    """Add the config file's `agents` table to `found` (a broken entry: one problem line)."""
    for name, entry in configured.items():
        _keep(found, partial(_configured, str(name), entry), f"agents[{name!r}]")


def _keep(found: Definitions, make: Callable[[], AgentDefinition], label: str) -> None:
    try:
        agent = make()
    except FrontMatterError as exc:
        found.problems.append(f"skipped {label}: {exc}")
        return
    if found.get(agent.name) is not None:
        found.problems.append(f"skipped {label}: another subagent is called {agent.name}")
        return
    found.agents.append(agent)


def _configured(name: str, entry: object) -> AgentDefinition:
    if not isinstance(entry, Mapping):
        raise FrontMatterError("must be a dict (description, prompt, tools, adapter, model, mode)")
    prompt = entry.get("prompt") or ""
    if not isinstance(prompt, str):
        raise FrontMatterError("`prompt` must be text")
    return replace(from_fields(name, entry, prompt, "config"), source=f"agents[{name!r}]")


def _read(path: Path, label: str) -> AgentDefinition:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise FrontMatterError(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FrontMatterError(f"over {MAX_FILE_BYTES:,} bytes")
    document = split(data.decode("utf-8", errors="replace"))
    return from_fields(None, document.fields, document.body, label)


def _markdown_files(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if n.endswith(".md") and (folder / n).is_file()][:200]
