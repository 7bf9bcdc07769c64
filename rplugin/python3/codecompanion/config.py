"""The user's Python config file: read with runpy, checked, every problem one `file:line:` line.

The file may set `adapter` (a name), `adapters` (settings per adapter), `tools` (name → entry or
tool), `groups` (name → group), `mcp` (`{"servers": {name: server}}`, see mcp/), `acp`
(external agents by name, see acp/settings.py), `permissions` (the chat mode and the command
sandbox, see sandbox/settings.py), `hooks` (commands or functions run on a chat's events, see
hooks/), `agents` (subagent definitions, see subagents/), `after_edit` (glob → checks run after
the model's edits, see after_edit/) and `opts` (`opts["tool_system"]`: the tool system's options
such as `timeout`; `opts["tools"]`: extra opts per tool, e.g. allow/deny rules; `opts["editor"]`:
diagnostics after edits and the checks' settings). A broken file never stops the plugin: the
valid parts are kept, the rest falls back to defaults, and `Config.error` says what was wrong and
where.
"""

from __future__ import annotations

import ast
import logging
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .textcalls.mode import TEXT_CALL_SETTINGS, setting_problem
from .tools.compat.coerce import coerce
from .tools.model.registry import ENTRY_KEYS, Group, is_entry, split_entry

log = logging.getLogger("codecompanion.config")

_SETTINGS = (
    "adapter",
    "adapters",
    "tools",
    "groups",
    "opts",
    "mcp",
    "acp",
    "permissions",
    "hooks",
    "agents",
    "after_edit",
)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _is_seconds(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value is None or (number and value > 0)


def _is_names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_opts_by_tool(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(opts, dict) for opts in value.values())


def _is_env_opts(value: Any) -> bool:
    return isinstance(value, dict) and all(
        key in ("drop", "pass") and _is_names(names) for key, names in value.items()
    )


# Options of the tool system (`opts["tool_system"]`) and a check for each; others pass through.
_TOOL_SYSTEM_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "auto_submit": (_is_bool, "true or false"),
    "max_auto_rounds": (_is_count, "a positive integer"),
    "max_output": (_is_count, "a positive integer"),
    "timeout": (_is_seconds, "a positive number of seconds (or None)"),
    "default_tools": (_is_names, "a list of tool or group names"),
    "env": (_is_env_opts, "a dict with `drop` and/or `pass` lists of variable names"),
    "short_descriptions": (lambda v: isinstance(v, bool) or v == "auto", 'true, false or "auto"'),
}


def _is_fraction(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and 0 < value <= 1


def _is_small_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_name_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_windows(value: Any) -> bool:
    return isinstance(value, dict) and all(_is_count(size) for size in value.values())


def _is_prices(value: Any) -> bool:
    def price(entry: Any) -> bool:
        return isinstance(entry, dict) and all(
            isinstance(entry.get(k), (int, float)) and entry[k] >= 0 for k in ("input", "output")
        )

    return isinstance(value, dict) and all(price(entry) for entry in value.values())


# `opts["context"]`: the token budget (see budget/manager.py BudgetOptions).
_CONTEXT_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "prune_at": (_is_fraction, "a fraction of the window (0 to 1)"),
    "compact_at": (_is_fraction, "a fraction of the window (0 to 1)"),
    "keep_rounds": (_is_small_count, "a whole number of tool rounds"),
    "keep_turns": (_is_count, "a positive number of turns"),
    "reserve": (_is_count, "a positive number of tokens"),
    "prune": (_is_bool, "true or false"),
    "auto_compact": (_is_bool, "true or false"),
    "compact_adapter": (_is_name_or_none, "an adapter name"),
    "windows": (_is_windows, "a dict of model name → window in tokens"),
    "prices": (_is_prices, 'a dict of model name → {"input": USD, "output": USD} per 1M tokens'),
}
# `opts["rules"]`: the rules files (see rules.py RulesOptions).
_RULES_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "enabled": (_is_bool, "true or false"),
    "files": (_is_names, "a list of file names (relative to the project)"),
    "user_files": (_is_names, "a list of paths (~/ for your home)"),
    "import_depth": (_is_small_count, "a whole number"),
}
# `opts["skills"]`: SKILL.md folders (see skills/catalog.py SkillOptions).
_SKILLS_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "enabled": (_is_bool, "true or false"),
    "folders": (_is_names, "a list of folders holding skill folders (~/ for your home)"),
}
# `opts["hooks"]`: whether Claude Code's settings files' hooks run too (see hooks/table.py).
_HOOKS_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "claude_settings": (_is_bool, "true or false"),
}
# `opts["agents"]`: subagents (see subagents/chat_agents.py AgentOptions).
_AGENTS_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "enabled": (_is_bool, "true or false"),
    "max_concurrent": (_is_count, "a positive integer"),
    "max_result": (_is_count, "a positive number of characters"),
}


def _is_diagnostics_level(value: Any) -> bool:
    return value in (True, False, "problems", "errors")


def _is_seconds_or_zero(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


# `opts["editor"]`: what the editor feeds back after an edit (see after_edit/).
_EDITOR_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "diagnostics": (_is_diagnostics_level, 'true, false, "problems" or "errors"'),
    "diagnostics_wait": (_is_seconds_or_zero, "a number of seconds (0 or more)"),
    "max_diagnostics": (_is_count, "a positive integer"),
    "find_checks": (_is_bool, "true or false"),
    "checks_timeout": (_is_seconds, "a positive number of seconds"),
}
_SECTIONS = {
    "hooks": _HOOKS_CHECKS,
    "agents": _AGENTS_CHECKS,
    "tool_system": _TOOL_SYSTEM_CHECKS,
    "context": _CONTEXT_CHECKS,
    "rules": _RULES_CHECKS,
    "skills": _SKILLS_CHECKS,
    "editor": _EDITOR_CHECKS,
}


@dataclass
class Config:
    """What the config file set (defaults where it set nothing or something invalid)."""

    adapter: str | None = None
    adapters: dict[str, dict[str, Any]] = field(default_factory=dict)
    tools: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, Any] = field(default_factory=dict)
    opts: dict[str, Any] = field(default_factory=dict)
    mcp: dict[str, Any] = field(default_factory=dict)
    acp: dict[str, Any] = field(default_factory=dict)  # external agents, see acp/settings.py
    permissions: dict[str, Any] = field(default_factory=dict)  # see sandbox/settings.py
    hooks: dict[str, Any] = field(default_factory=dict)  # see hooks/table.py
    agents: dict[str, Any] = field(default_factory=dict)  # see subagents/definitions.py
    after_edit: dict[str, list[str]] = field(default_factory=dict)  # glob → checks' commands
    path: str | None = None
    error: str | None = None
    # The user's own Python files the config file imported (outside Python and its packages):
    # the host runs them, so no command may write them (see sandbox/user_places.py).
    imports: tuple[str, ...] = ()


def config_file_path(env: Mapping[str, str], given: str | None = None) -> str:
    """The config file Neovim reads: `given` (setup's `config_file`, `--config`), else
    `$CODECOMPANION_CONFIG`, else `stdpath("config")/codecompanion.py`."""
    if given:
        return os.path.expanduser(given)
    if env.get("CODECOMPANION_CONFIG"):
        return env["CODECOMPANION_CONFIG"]
    # stdpath("config") on Linux and macOS: $XDG_CONFIG_HOME/$NVIM_APPNAME, ~/.config/nvim.
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, env.get("NVIM_APPNAME") or "nvim", "codecompanion.py")


def load_config(path: str | os.PathLike[str] | None) -> Config:
    """Run the config file at `path` and check it; a missing file gives the defaults, no error."""
    if path is None:
        return Config()
    filename = os.path.expanduser(os.fspath(path))
    if not os.path.isfile(filename):
        return Config(path=filename)
    before = set(sys.modules)
    try:
        namespace = runpy.run_path(filename, run_name="codecompanion_config")
    except SyntaxError as exc:
        where = f"{exc.filename or filename}:{exc.lineno or 0}"
        return _failed(filename, f"{where}: SyntaxError: {exc.msg}")
    except BaseException as exc:  # SystemExit and friends in user code must not kill the host
        if isinstance(exc, KeyboardInterrupt):
            raise
        line = _error_line(exc, filename)
        message = f"{filename}:{line}: {type(exc).__name__}: {exc}".rstrip(": ")
        return _failed(filename, message)
    config = _checked(filename, namespace)
    config.imports = own_imports(set(sys.modules) - before)
    return config


def own_imports(names: set[str]) -> tuple[str, ...]:
    """The files of modules `names` that are neither Python's nor an installed package's."""
    own_package = os.path.dirname(os.path.realpath(__file__))  # the plugin's (see README)
    system = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    system.add(own_package)
    files = []
    for name in sorted(names):
        found = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(found, str):
            continue
        real = os.path.realpath(found)
        if not any(real.startswith(prefix.rstrip("/") + "/") for prefix in system):
            files.append(real)
    return tuple(files)


def _failed(filename: str, message: str) -> Config:
    log.error("%s", message)
    return Config(path=filename, error=message)


def _error_line(exc: BaseException, filename: str) -> int:
    """The line of `filename` the exception came from (its innermost frame in that file)."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(filename):
            line = frame.lineno or line
    return line


def assignment_lines(filename: str) -> dict[str, int]:
    """The line where each top-level name is (last) assigned, for pointing at bad values."""
    try:
        with open(filename, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[node.name] = node.lineno
        for target in targets:
            if isinstance(target, ast.Name):
                lines[target.id] = node.lineno
    return lines


def _checked(filename: str, namespace: Mapping[str, Any]) -> Config:
    """Keep each valid setting; report the first problem (and how many more) as one line."""
    config = Config(path=filename)
    problems: list[tuple[str, str]] = []
    for name in _SETTINGS:
        if name not in namespace:
            continue
        value, errors = _CHECKS[name](namespace[name])
        problems.extend((name, message) for message in errors)
        if value is not None:
            setattr(config, name, value)
    if problems:
        lines = assignment_lines(filename)
        problems.sort(key=lambda problem: lines.get(problem[0], 0))
        name, message = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        config.error = f"{filename}:{lines.get(name, 0)}: {message}{more}"
        for name, message in problems:
            log.error("%s:%s: %s", filename, lines.get(name, 0), message)
    return config


def _check_adapter(value: Any) -> tuple[Any, list[str]]:
    if value is None or isinstance(value, str):
        return value, []
    return None, [f"adapter must be a name (a string), not {type(value).__name__}"]


def _check_adapters(value: Any) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return None, [f"adapters must be a dict of adapter name → settings, not {_kind(value)}"]
    kept, errors = {}, []
    for name, settings in value.items():
        if isinstance(name, str) and isinstance(settings, dict):
            problem = setting_problem(name, settings)
            if problem is not None:  # the adapter still works, with tools offered as by default
                errors.append(problem)
                settings = {k: v for k, v in settings.items() if k not in TEXT_CALL_SETTINGS}
            kept[name] = settings
        else:
            errors.append(f"adapters[{name!r}] must be a dict of settings, not {_kind(settings)}")
    return kept, errors


def _check_tools(value: Any) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return None, [f"tools must be a dict of tool name → entry, not {_kind(value)}"]
    kept, errors = {}, []
    for name, entry in value.items():
        try:
            # Every way of writing a tool (fields in the entry, `location`) as one entry shape;
            # kept in that shape so a module named by `location` is imported once.
            entry = split_entry(str(name), entry) if isinstance(entry, dict) else entry
        except Exception as exc:  # importing the user's module can raise anything
            errors.append(f"tools[{name!r}]: {exc}")
            continue
        problem = _tool_problem(name, entry)
        if problem:
            errors.append(f"tools[{name!r}]: {problem}")
        else:
            kept[name] = entry
    return kept, errors


def _tool_problem(name: Any, entry: Any) -> str | None:
    """Why `entry` cannot be a tool entry, or None when it can."""
    if not isinstance(name, str):
        return "tool names must be strings"
    if is_entry(entry):
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            return f"unknown key(s) {', '.join(sorted(map(str, unknown)))}"
        if not isinstance(entry.get("opts", {}), dict):
            return "opts must be a dict"
        enabled = entry.get("enabled", True)
        if not (isinstance(enabled, bool) or callable(enabled)):
            return "enabled must be true, false or a function"
        if "description" in entry and not isinstance(entry["description"], str):
            return "description must be a string"
        if "callback" not in entry:
            return None  # adjusts a builtin tool; the registry checks that one exists
        entry = entry["callback"]
    try:
        coerce(entry, name)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _check_groups(value: Any) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return None, [f"groups must be a dict of group name → group, not {_kind(value)}"]
    kept, errors = {}, []
    for name, group in value.items():
        try:
            Group.from_value(str(name), group)
        except (TypeError, ValueError) as exc:
            errors.append(str(exc))
        else:
            kept[name] = group
    return kept, errors


def _check_opts(value: Any) -> tuple[Any, list[str]]:
    """`opts`: free-form, except `tools` (opts per tool) and the checked sections."""
    if not isinstance(value, dict):
        return None, [f"opts must be a dict, not {_kind(value)}"]
    kept, errors = dict(value), []
    if "tools" in value and not _is_opts_by_tool(value["tools"]):
        errors.append("opts['tools'] must be a dict of tool name → opts dict")
        del kept["tools"]
    for section, checks in _SECTIONS.items():
        _check_section(value, section, checks, kept, errors)
    return kept, errors


def _check_section(
    value: dict[str, Any],
    section: str,
    checks: dict[str, tuple[Callable[[Any], bool], str]],
    kept: dict[str, Any],
    errors: list[str],
) -> None:
    """Keep the valid options of `opts[section]`; say what is wrong with the others."""
    options = value.get(section, {})
    if not isinstance(options, dict):
        errors.append(f"opts[{section!r}] must be a dict, not {_kind(options)}")
        del kept[section]
        return
    if not options:
        return
    kept[section] = dict(options)
    for key, option in options.items():
        check = checks.get(key)
        if check is not None and not check[0](option):
            errors.append(f"opts[{section!r}][{key!r}] must be {check[1]}, not {option!r}")
            del kept[section][key]


def _kind(value: Any) -> str:
    return type(value).__name__


def _check_mcp(value: Any) -> tuple[Any, list[str]]:
    from .mcp.config import check_mcp

    return check_mcp(value)


def _check_acp(value: Any) -> tuple[Any, list[str]]:
    from .acp.settings import check_acp

    return check_acp(value)


def _check_permissions(value: Any) -> tuple[Any, list[str]]:
    """`permissions`: the mode and sandbox table (sandbox/settings.py reads it)."""
    from .sandbox.settings import read_permissions

    if not isinstance(value, dict):
        return None, [f"permissions must be a dict, not {_kind(value)}"]
    try:
        read_permissions(value)
    except ValueError as exc:
        return None, [str(exc)]
    return dict(value), []


def _check_hooks(value: Any) -> tuple[Any, list[str]]:
    """`hooks`: event → matchers (hooks/table.py reads it); a broken entry is left out."""
    from .hooks.table import read_table

    if not isinstance(value, dict):
        return None, [f"hooks must be a dict of event name → list of matchers, not {_kind(value)}"]
    table = read_table(value, "hooks")
    return dict(value), [line.removeprefix("hooks: ") for line in table.problems]


def _check_agents(value: Any) -> tuple[Any, list[str]]:
    """`agents`: name → definition (subagents/definitions.py reads it); a broken one skipped."""
    from .subagents.definitions import Definitions, configured_into

    if not isinstance(value, dict):
        return None, [f"agents must be a dict of subagent name → definition, not {_kind(value)}"]
    found = Definitions()
    configured_into(found, value)
    return dict(value), [line.removeprefix("skipped ") for line in found.problems]


def _check_after_edit(value: Any) -> tuple[Any, list[str]]:
    """`after_edit`: glob → a command line or a list of them (see after_edit/checks.py)."""
    if not isinstance(value, dict):
        return None, [f"after_edit must be a dict of glob → command lines, not {_kind(value)}"]
    kept: dict[str, list[str]] = {}
    errors = []
    for glob, commands in value.items():
        lines = [commands] if isinstance(commands, str) else commands
        if not isinstance(glob, str) or not glob or not _is_names(lines) or not all(lines):
            errors.append(f"after_edit[{glob!r}] must be a command line or a list of them")
            continue
        kept[glob] = list(lines)
    return kept, errors


_CHECKS: dict[str, Callable[[Any], tuple[Any, list[str]]]] = {
    "after_edit": _check_after_edit,
    "agents": _check_agents,
    "hooks": _check_hooks,
    "mcp": _check_mcp,
    "acp": _check_acp,
    "adapter": _check_adapter,
    "adapters": _check_adapters,
    "tools": _check_tools,
    "groups": _check_groups,
    "opts": _check_opts,
    "permissions": _check_permissions,
}
