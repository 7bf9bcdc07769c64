"""The Tool: CodeCompanion's table of fields as a dataclass, made from a dict, a Tool or a
function, checked when it is made so a bad shape fails early and clearly."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.contract import ToolContext, ToolSpec
from .call import TableCall
from .cmds import Cmd
from .legacy import LEGACY_HANDLERS, LEGACY_OUTPUTS, is_argv, upgrade

_FIELDS = ("name", "cmds", "schema", "system_prompt", "opts", "env", "handlers", "output")
_HANDLERS = ("setup", "on_exit", "prompt_condition", *LEGACY_HANDLERS)
_OUTPUTS = ("success", "error", "prompt", "rejected", "cancelled", *LEGACY_OUTPUTS)


@dataclass
class Tool(ToolSpec):
    """A tool in CodeCompanion's shape: `cmds` run in order, `handlers` around them, `output`
    callbacks saying what the model and the user get.

    Each call gets its own `self` (tools/compat/call.py) carrying the model's `args`, the
    call, the config `entry` and the call's own copies of `cmds` and `opts`; the Tool itself
    never changes while it runs.
    """

    cmds: list[Cmd] = field(default_factory=list)
    env: Callable[..., dict[str, Any]] | None = None
    handlers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    output: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_tool(self)

    @property
    def words_results(self) -> bool:
        """An older tool's `output_prompt` writes the text the model is sent."""
        return "output_prompt" in self.output

    def start(self, ctx: ToolContext, args: dict[str, Any], entry: Mapping[str, Any]) -> TableCall:
        """One call: the `self` its callbacks receive."""
        return TableCall(self, ctx, args, entry, self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], name: str | None = None) -> Tool:
        """Build a tool from CodeCompanion's table shape; unknown keys are an error.

        Older fields (`cmd`, `prompt`, `pre_cmd`, `override_cmds`, `output_prompt`, `request`)
        are mapped onto today's (see legacy.py), each with a log line.
        """
        data = upgrade(data, str(name or data.get("name") or "?"))
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown tool field(s): {', '.join(sorted(unknown))}")
        schema = dict(data.get("schema") or {})
        function = schema.get("function", {})
        tool_name = name or data.get("name") or (function or {}).get("name")
        if not tool_name:
            raise ValueError("a tool needs a name (or a schema with a function name)")
        cmds = data.get("cmds") or []
        if callable(cmds):
            cmds = [cmds]
        return cls(
            name=str(tool_name),
            cmds=list(cmds),
            schema=schema,
            system_prompt=data.get("system_prompt"),
            opts=dict(data.get("opts") or {}),
            env=data.get("env"),
            handlers=dict(data.get("handlers") or {}),
            output=dict(data.get("output") or {}),
        )


def _check_tool(made: Tool) -> None:
    """Reject shapes that would only fail later, at run time, with a clear message."""
    if not isinstance(made.name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", made.name):
        raise ValueError(f"tool name {made.name!r}: use 1-64 letters, digits, '_', '-' or '.'")
    _check_cmds(made)
    if not isinstance(made.schema, dict):
        raise ValueError(f"{made.name}: schema must be a dict")
    if not isinstance(made.opts, dict):
        raise ValueError(f"{made.name}: opts must be a dict")
    _check_callbacks(made, "handlers", _HANDLERS)
    _check_callbacks(made, "output", _OUTPUTS)
    if made.env is not None and not callable(made.env):
        raise ValueError(f"{made.name}: env must be a function")


def _is_flagged(cmd: object) -> bool:
    """CodeCompanion's `{"cmd": ..., "flag": name}`: a command whose success sets a flag."""
    if not isinstance(cmd, dict) or set(cmd) - {"cmd", "flag"}:
        return False
    command, flag = cmd.get("cmd"), cmd.get("flag")
    return (isinstance(command, str) or is_argv(command)) and (
        flag is None or isinstance(flag, str)
    )


def _check_cmds(made: Tool) -> None:
    """Every cmd is a function, a command as a list of strings, or `{"cmd", "flag"}`."""
    if not isinstance(made.cmds, list):
        raise ValueError(f"{made.name}: cmds must be a list")
    for index, cmd in enumerate(made.cmds):
        if not (callable(cmd) or is_argv(cmd) or _is_flagged(cmd)):
            raise ValueError(
                f"{made.name}: cmds[{index}] must be a function, a list of strings or "
                '{"cmd": ..., "flag": name}'
            )


def _check_callbacks(made: Tool, group: str, known: tuple[str, ...]) -> None:
    """`handlers` or `output`: a dict of known keys to functions."""
    table = getattr(made, group)
    if not isinstance(table, dict):
        raise ValueError(f"{made.name}: {group} must be a dict")
    for key, value in table.items():
        if key not in known:
            raise ValueError(f"{made.name}: unknown {group} key {key!r}")
        if not callable(value):
            raise ValueError(f"{made.name}: {group}.{key} must be a function")
