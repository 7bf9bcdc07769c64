"""The tools and groups a user can offer: the builtins plus the user's own, by name."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from ...outside import UserValue
from ..compat.coerce import coerce
from ..compat.legacy import TOOL_FIELDS, load_location
from .arguments import SchemaValidator
from .calling import arity
from .contract import ToolSpec

log = logging.getLogger("codecompanion.tools")

# Keys of a config entry (as opposed to a bare tool given as a dict).
ENTRY_KEYS = frozenset({"description", "callback", "opts", "enabled", "visible"})
# Keys that name where the tool lives: older configs' `location`, today's `path`.
LOCATION_KEYS = ("location", "path")


@dataclass
class ToolEntry:
    """One available tool: the tool (named and with merged opts) and how it is listed."""

    name: str
    tool: ToolSpec
    description: str
    opts: dict[str, Any]
    enabled: bool | Callable[..., Any] = True
    visible: bool = True
    builtin: bool = False
    _validator: SchemaValidator | None = field(default=None, init=False, repr=False, compare=False)

    def validator(self) -> SchemaValidator:
        """The argument check of this tool's schema (jsonschema's part compiled when needed)."""
        if self._validator is None:
            self._validator = SchemaValidator(self.tool.parameters)
        return self._validator

    def is_enabled(self) -> bool:
        """Evaluate `enabled`; a callable that fails counts as disabled (and is logged)."""
        if not callable(self.enabled):
            return bool(self.enabled)
        try:
            return bool(self.enabled(*(self,)[: arity(self.enabled, 1)]))
        except Exception:
            log.exception("tool %s: enabled() failed; treating it as disabled", self.name)
            return False

    def config(self) -> dict[str, Any]:
        """The config entry as callbacks see it at run time (`self.entry`, or `self.tool`)."""
        return {"name": self.name, "description": self.description, "opts": dict(self.opts)}


@dataclass
class Group:
    """Several tools offered together with `@{name}`."""

    name: str
    tools: list[str]
    description: str = ""
    system_prompt: str | None = None
    prompt: str | None = None
    opts: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_value(cls, name: str, value: UserValue) -> Group:
        """A group from a Group or a dict `{tools, description, system_prompt, prompt, opts}`."""
        if isinstance(value, Group):
            return replace(value, name=name)
        if not isinstance(value, Mapping):
            raise ValueError(f"group {name}: expected a dict, got {type(value).__name__}")
        tools = value.get("tools")
        if not isinstance(tools, (list, tuple)) or not all(isinstance(t, str) for t in tools):
            raise ValueError(f"group {name}: `tools` must be a list of tool names")
        unknown = set(value) - {"tools", "description", "system_prompt", "prompt", "opts"}
        if unknown:
            raise ValueError(f"group {name}: unknown key(s) {', '.join(sorted(unknown))}")
        return cls(
            name=name,
            tools=list(tools),
            description=str(value.get("description") or ""),
            system_prompt=_text(value.get("system_prompt"), name),
            prompt=_text(value.get("prompt"), name),
            opts=dict(value.get("opts") or {}),
        )


def _text(value: Any, name: str) -> str | None:
    """A group prompt: a string, or a callable returning one (called with the group name)."""
    if value is None or isinstance(value, str):
        return value
    if callable(value):
        return str(value(*(name,)[: arity(value, 1)]))
    raise ValueError(f"group {name}: prompts must be strings")


def summary(description: str) -> str:
    """The first line of a description, short enough for a completion menu."""
    line = description.strip().splitlines()[0] if description.strip() else ""
    return line if len(line) <= 80 else line[:77] + "..."


def is_entry(value: UserValue) -> bool:
    """True for a config entry dict (`{"callback": ..., "opts": ...}`), False for a bare tool."""
    return isinstance(value, Mapping) and ("callback" in value or set(value) <= ENTRY_KEYS)


def split_entry(name: str, value: UserValue) -> dict[str, Any]:
    """A config value as an entry with a `callback`, whichever way it was written.

    Besides `{"callback": tool, ...}` and a bare tool, CodeCompanion's docs write the tool's
    fields straight into the entry (`{"description", "cmds", "schema", ...}`), and older ones
    give a `location` (or `path`) to import it from.
    """
    if not isinstance(value, Mapping):
        return {"callback": value}
    entry = dict(value)
    where = next((key for key in LOCATION_KEYS if isinstance(entry.get(key), str)), None)
    if where is not None and "callback" not in entry:
        location = entry.pop(where)
        entry.pop("name", None)  # older configs give a display name here, not the tool's name
        entry["callback"] = load_location(name, location)
        log.info("tool %s: loaded from %s = %r", name, where, location)
    if is_entry(entry):
        return entry
    fields = {key: entry.pop(key) for key in list(entry) if key in TOOL_FIELDS}
    if not fields:
        return {"callback": value}
    if "opts" in entry or "opts" in fields:
        # In this form `opts` belongs to the tool and the entry alike; one copy is enough.
        entry["opts"] = fields.pop("opts", entry.get("opts"))
    log.debug("tool %s: fields given in the config entry itself (no `callback`)", name)
    return {**entry, "callback": fields}


# The builtin tools' modules and groups; problems are reported through the callback.
BuiltinSource = Callable[[Callable[[str], None]], tuple[Sequence[ModuleType], Mapping[str, Any]]]
# What lists the builtins without loading them: each tool's menu line, and the groups.
BuiltinListing = tuple[Mapping[str, str], Mapping[str, Any]]


class ToolRegistry:
    """Builtin tools and the user's, with groups; loaded on first use.

    `builtins` gives the builtin tools' modules and groups (`tools.builtin.load_builtins`, passed
    by `tools.tool_registry`): the model knows what a tool is, not which tools exist. `listing`
    names them without importing them, for the completion menu.
    """

    def __init__(
        self,
        user_tools: Mapping[str, Any] | None = None,
        groups: Mapping[str, Any] | None = None,
        *,
        builtins: BuiltinSource | None = None,
        tool_opts: Mapping[str, Mapping[str, Any]] | None = None,
        listing: BuiltinListing | None = None,
    ) -> None:
        self._listing = listing
        self._user_tools = dict(user_tools or {})
        self._user_groups = dict(groups or {})
        self._builtins = builtins
        self._tool_opts = {name: dict(opts) for name, opts in (tool_opts or {}).items()}
        self._entries: dict[str, ToolEntry] | None = None
        self._groups: dict[str, Group] = {}
        # Groups whose tools are known only once something starts (an MCP server's tools).
        self._lazy: dict[str, Callable[[], Awaitable[list[ToolEntry]]]] = {}
        self.errors: list[str] = []

    def _load(self) -> dict[str, ToolEntry]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, ToolEntry] = {}
        groups: dict[str, Any] = {}
        if self._builtins:
            self._load_builtins(entries, groups)
        for name, value in self._user_tools.items():
            try:
                entries[name] = self._user_entry(name, value, entries.get(name))
            except (TypeError, ValueError) as exc:
                self._error(f"tool {name}: {exc}")
        for name, opts in self._tool_opts.items():
            if name in entries:
                entry = entries[name]
                entry.opts = {**entry.opts, **opts}
                entry.tool = replace(entry.tool, opts=dict(entry.opts))
        for name in list(groups):
            if name in self._user_tools:
                # The user's own tool of that name wins over a builtin group (`@{files}`).
                log.info("tool %s: the user's tool hides the builtin group of that name", name)
                del groups[name]
        groups.update(self._user_groups)
        for name, value in groups.items():
            try:
                self._groups[name] = Group.from_value(name, value)
            except (TypeError, ValueError) as exc:
                self._error(str(exc))
        self._entries = entries
        return entries

    def _error(self, message: str) -> None:
        log.error("%s", message)
        self.errors.append(message)

    def _load_builtins(self, entries: dict[str, ToolEntry], groups: dict[str, Any]) -> None:
        assert self._builtins is not None
        modules, builtin_groups = self._builtins(self._error)
        groups.update(builtin_groups)
        for module in modules:
            try:
                value = getattr(module, "TOOL", None)
                if value is None:
                    continue
                made = coerce(value)
                opts = {**made.opts, **dict(getattr(module, "DEFAULT_OPTS", {}) or {})}
                entries[made.name] = ToolEntry(
                    name=made.name,
                    tool=replace(made, opts=opts),
                    description=summary(made.description),
                    opts=opts,
                    builtin=True,
                )
            except Exception as exc:
                self._error(f"builtin tool {module.__name__} failed to load: {exc}")

    def _user_entry(self, name: str, value: Any, builtin: ToolEntry | None) -> ToolEntry:
        """An entry from the user's config; an entry without a callback adjusts a builtin."""
        entry = split_entry(name, value)
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise ValueError(f"unknown entry key(s) {', '.join(sorted(unknown))}")
        if "callback" in entry:
            made = coerce(entry["callback"], name)
        elif builtin is not None:
            made = builtin.tool
        else:
            raise ValueError("no `callback` (the tool) and no builtin tool of that name")
        extra = entry.get("opts") or {}
        if not isinstance(extra, Mapping):
            raise ValueError("`opts` must be a dict")
        opts = {**made.opts, **extra}
        enabled = entry.get("enabled", True)
        if not (isinstance(enabled, bool) or callable(enabled)):
            raise ValueError("`enabled` must be a bool or a function")
        description = entry.get("description")
        return ToolEntry(
            name=name,
            tool=replace(made, name=name, opts=dict(opts)),
            description=str(description) if description else summary(made.description),
            opts=opts,
            enabled=enabled,
            visible=bool(entry.get("visible", True)),
            builtin=builtin is not None and "callback" not in entry,
        )

    def get(self, name: str) -> ToolEntry | None:
        """The enabled tool called `name`, or None."""
        entry = self._load().get(name)
        return entry if entry is not None and entry.is_enabled() else None

    def names(self) -> list[str]:
        """Every enabled tool's name, sorted."""
        return sorted(name for name in self._load() if self.get(name) is not None)

    def group_names(self) -> list[str]:
        """Every group's name, sorted (not a group whose tools are all disabled)."""
        self._load()
        return sorted(name for name in self._groups if self.group(name) is not None)

    def group(self, name: str) -> Group | None:
        """The group called `name`, or None (also when none of its tools is enabled: a group
        that would offer nothing is hidden)."""
        self._load()
        group = self._groups.get(name)
        if group is None or name in self._lazy:
            return group
        return group if any(self.get(tool) is not None for tool in group.tools) else None

    def add_lazy_group(self, group: Group, load: Callable[[], Awaitable[list[ToolEntry]]]) -> None:
        """A group whose tools `load` makes (awaited when a chat first needs them)."""
        self._load()
        self._groups[group.name] = group
        self._lazy[group.name] = load

    async def load_group(self, name: str) -> list[str]:
        """The tools of group `name`, made first for a lazy group (its error propagates)."""
        entries = self._load()
        load = self._lazy.get(name)
        group = self._groups.get(name)
        if group is None:
            return []
        if load is not None:
            for made in await load():
                entry = self._unique(made, entries, name)
                opts = {**entry.opts, **self._tool_opts.get(entry.name, {})}
                entry.opts, entry.tool = opts, replace(entry.tool, opts=dict(opts))
                entries[entry.name] = entry
                if entry.name not in group.tools:
                    group.tools.append(entry.name)
            self._lazy.pop(name, None)
        return list(group.tools)

    def _unique(self, entry: ToolEntry, entries: dict[str, ToolEntry], group: str) -> ToolEntry:
        """`entry`, renamed if its name is taken: a tool made later (an MCP server's) never
        replaces a builtin, a configured tool or another server's tool; the rename is said."""
        if entry.name not in entries:
            return entry
        number = 2
        while f"{entry.name}_{number}" in entries:
            number += 1
        new = f"{entry.name[:60]}_{number}"
        self._error(
            f"{group}: its tool {entry.name} would replace a tool of the same name; "
            f"offered as {new}"
        )
        schema = dict(entry.tool.schema)
        if isinstance(schema.get("function"), dict):
            schema["function"] = {**schema["function"], "name": new}
        elif "name" in schema:
            schema["name"] = new
        return replace(entry, name=new, tool=replace(entry.tool, name=new, schema=schema))

    def is_lazy(self, name: str) -> bool:
        """True for a group whose tools are not made yet."""
        return name in self._lazy

    def completion_items(self) -> list[dict[str, str]]:
        """`@{name}` completion items: groups first, then visible enabled tools."""
        listed = self._listed_items()
        if listed is not None:
            return listed
        items = [
            {"word": f"@{{{name}}}", "kind": "group", "menu": self._groups[name].description}
            for name in self.group_names()
        ]
        for name in self.names():
            entry = self._load()[name]
            if entry.visible:
                items.append({"word": f"@{{{name}}}", "kind": "tool", "menu": entry.description})
        return items

    def _listed_items(self) -> list[dict[str, str]] | None:
        """The completion items from the builtins' listing, while no tool module is loaded and
        the config has no tools of its own (None otherwise: the tools must be loaded)."""
        if self._entries is not None or self._listing is None or self._user_tools:
            return None
        summaries, builtin_groups = self._listing
        groups: dict[str, Group] = {}
        try:
            for name, value in {**builtin_groups, **self._user_groups}.items():
                groups[name] = Group.from_value(name, value)
        except (TypeError, ValueError):
            return None  # reported when the tools load
        items = [
            {"word": f"@{{{name}}}", "kind": "group", "menu": groups[name].description}
            for name in sorted(groups)
            if any(tool in summaries for tool in groups[name].tools)
        ]
        items += [
            {"word": f"@{{{name}}}", "kind": "tool", "menu": summaries[name]}
            for name in sorted(summaries)
        ]
        return items
