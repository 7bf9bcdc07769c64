"""The builtins' listing (names, menu lines, groups) matches the tool modules it stands for, and
the completion menu made from it is the one the loaded tools give."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from codecompanion.tools import tool_registry
from codecompanion.tools.builtin import BUILTIN_TOOLS, GROUPS, SUMMARIES, load_builtins
from codecompanion.tools.compat.coerce import coerce
from codecompanion.tools.model.registry import ToolRegistry, summary


def test_the_listing_names_every_builtin_module_with_its_descriptions_first_line() -> None:
    errors: list[str] = []
    modules, _ = load_builtins(errors.append)
    tools = [coerce(module.TOOL) for module in modules if hasattr(module, "TOOL")]
    assert errors == []
    assert dict(SUMMARIES) == {tool.name: summary(tool.description) for tool in tools}
    assert sorted(SUMMARIES) == sorted(BUILTIN_TOOLS)


def _counted(calls: list[int]) -> Callable[..., tuple[Sequence[ModuleType], Mapping[str, Any]]]:
    def builtins(error: Callable[[str], None]) -> tuple[Sequence[ModuleType], Mapping[str, Any]]:
        calls.append(1)
        return load_builtins(error)

    return builtins


def test_the_completion_menu_needs_no_tool_module_and_equals_the_loaded_one() -> None:
    calls: list[int] = []
    groups = {"mine": {"tools": ["read_file"], "description": "just reading"}}
    registry = ToolRegistry(groups=groups, builtins=_counted(calls), listing=(SUMMARIES, GROUPS))
    listed = registry.completion_items()
    assert calls == []
    assert {"word": "@{mine}", "kind": "group", "menu": "just reading"} in listed
    assert registry.get("read_file") is not None  # a tool offered loads them
    assert calls == [1]
    assert registry.completion_items() == listed


def test_a_config_with_its_own_tools_lists_from_the_loaded_tools() -> None:
    def shout(text: str) -> str:
        """Say it louder."""
        return text.upper()

    registry = tool_registry({"shout": shout, "run_command": {"enabled": False}})
    items = {item["word"] for item in registry.completion_items()}
    assert "@{shout}" in items
    assert "@{run_command}" not in items
