"""Older CodeCompanion tool fields, mapped onto today's model with a log line saying how.

Each older field keeps working as CodeCompanion documented it then:

- `prompt(schema)` (a top-level system prompt) is `system_prompt`; a singular `cmd` is `cmds`;
- `pre_cmd(env, args)` runs before the cmds, `override_cmds(cmds)` returns the cmds to run:
  kept as handlers of those names;
- `output_prompt(output)` gives the text sent back to the model: kept as an output;
- `handlers.approved(self)` decides the approval itself (True runs the cmds, False rejects);
- `request` is filled at run time (the parsed call, as `function_call`): a value in the
  config is ignored;
- `location` / `path` in a config entry name the module (or file) that holds the tool.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger("codecompanion.tools")

# Handler and output keys that only older tools use, with what each maps to.
LEGACY_HANDLERS = {
    "approved": "the approval step (True runs the cmds, False rejects the call)",
    "pre_cmd": "a step before the cmds, given (env, args)",
    "override_cmds": "the cmds to run, given the configured ones",
}
LEGACY_OUTPUTS = {"output_prompt": "the text sent back to the model, given the cmds' output"}
_TOP_LEVEL = {
    "prompt": "system_prompt",
    "cmd": "cmds",
}
_MOVED = {"pre_cmd": "handlers", "override_cmds": "handlers", "output_prompt": "output"}
# Fields of the tool itself (as opposed to the config entry around it).
TOOL_FIELDS = frozenset(
    {"name", "cmds", "schema", "system_prompt", "opts", "env", "handlers", "output"}
    | set(_TOP_LEVEL)
    | set(_MOVED)
    | {"request", "function_call"}
)


def upgrade(data: dict[str, Any], name: str) -> dict[str, Any]:
    """`data` with older fields moved to where today's model reads them (each move logged)."""
    data = dict(data)
    for old, new in _TOP_LEVEL.items():
        if old not in data:
            continue
        value = data.pop(old)
        if new in data:
            log.warning("tool %s: `%s` and `%s` both given; `%s` is ignored", name, old, new, old)
            continue
        if old == "cmd" and (callable(value) or is_argv(value)):
            value = [value]
        data[new] = value
        log.info("tool %s: the older field `%s` is read as `%s`", name, old, new)
    for old, group in _MOVED.items():
        if old in data:
            table = dict(data.get(group) or {})
            table[old] = data.pop(old)
            data[group] = table
            meaning = {**LEGACY_HANDLERS, **LEGACY_OUTPUTS}[old]
            log.info(
                "tool %s: the older field `%s` is kept as %s.%s: %s", name, old, group, old, meaning
            )
    for key in ("request", "function_call"):
        if key in data:
            data.pop(key)
            log.info(
                "tool %s: `%s` is filled when the tool runs; the configured value is ignored",
                name,
                key,
            )
    approved = (data.get("handlers") or {}).get("approved")
    if approved is not None:
        log.info("tool %s: handlers.approved is %s", name, LEGACY_HANDLERS["approved"])
    return data


def is_argv(value: Any) -> bool:
    """True for a command given as a list (or tuple) of strings."""
    return isinstance(value, (list, tuple)) and all(isinstance(part, str) for part in value)


def load_location(name: str, location: str, config_dir: Path | None = None) -> Any:
    """The tool a `location`/`path` names: a Python file, a module, or a package holding `name`.

    From the module: its `TOOL`, else an attribute named as the tool, else the module itself
    read as a tool (its top-level `cmds`, `schema`, ... as a Lua module returns its table).
    """
    module = _import(name, location, config_dir)
    for attribute in ("TOOL", name):
        value = getattr(module, attribute, None)
        if value is not None and not isinstance(value, ModuleType):
            return value
    fields = {key: getattr(module, key) for key in TOOL_FIELDS if hasattr(module, key)}
    if not fields:
        raise ValueError(f"{location}: no TOOL, no `{name}` and no tool fields in the module")
    return fields


def _import(name: str, location: str, config_dir: Path | None) -> ModuleType:
    path = Path(location).expanduser()
    if not path.is_absolute() and config_dir is not None and (config_dir / path).exists():
        path = config_dir / path
    if location.endswith(".py") or path.is_file():
        return _import_file(name, path)
    if path.is_dir() and (path / f"{name}.py").is_file():
        return _import_file(name, path / f"{name}.py")
    try:  # CodeCompanion resolves `location` + "." + the tool's name first
        return importlib.import_module(f"{location}.{name}")
    except ImportError:
        pass
    try:
        return importlib.import_module(location)
    except ImportError as exc:
        raise ValueError(f"cannot import {location!r}: {exc}") from None


def _import_file(name: str, path: Path) -> ModuleType:
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"codecompanion_user_tool_{name}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
