"""The registry: builtins and user tools in every form, overrides, enabled, groups, completion."""

from __future__ import annotations

import pytest

from codecompanion.tools import Tool, tool, tool_registry
from codecompanion.tools.model.registry import ToolRegistry
from tests.support.tools import calculator, simple


@tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


def test_every_form_of_user_tool_is_accepted() -> None:
    registry = ToolRegistry(
        {
            "calc_entry": {"description": "Perform calculations", "callback": calculator()},
            "calc_bare": calculator(),
            "shout": shout,
            "as_tool": Tool(name="whatever"),
        },
    )
    assert registry.errors == []
    assert registry.names() == ["as_tool", "calc_bare", "calc_entry", "shout"]
    entry = registry.get("calc_entry")
    assert entry is not None and entry.description == "Perform calculations"
    assert entry.tool.openai_schema()["function"]["name"] == "calc_entry"
    bare = registry.get("calc_bare")
    assert bare is not None and bare.description.startswith("Perform simple mathematical")


def test_entry_opts_override_the_tools_and_config_tool_opts_override_both() -> None:
    registry = ToolRegistry(
        {"c": {"callback": calculator(requires_approval=True, timeout=1), "opts": {"timeout": 2}}},
        tool_opts={"c": {"deny": ["*"]}},
    )
    entry = registry.get("c")
    assert entry is not None
    assert entry.opts == {"requires_approval": True, "timeout": 2, "deny": ["*"]}
    assert entry.tool.opts == entry.opts


def test_enabled_may_be_a_function_and_a_failing_one_disables() -> None:
    switch = {"on": False}

    def broken() -> bool:
        raise RuntimeError("no")

    registry = ToolRegistry(
        {
            "maybe": {"callback": simple(print, "maybe"), "enabled": lambda: switch["on"]},
            "broken": {"callback": simple(print, "broken"), "enabled": broken},
            "off": {"callback": simple(print, "off"), "enabled": False},
        },
    )
    assert registry.names() == [] and registry.get("maybe") is None
    switch["on"] = True
    assert registry.names() == ["maybe"]


def test_bad_entries_are_reported_and_the_rest_still_works() -> None:
    registry = ToolRegistry(
        {
            "good": shout,
            "typo": {"callback": calculator(), "enabeld": True},
            "broken": {"name": "broken", "cmds": ["not a list"]},
            "orphan": {"opts": {"timeout": 1}},
        },
        {"g": {"tools": "good"}},
    )
    assert registry.names() == ["good"]
    assert len(registry.errors) == 4
    assert any("enabeld" in error for error in registry.errors)
    assert any("no builtin tool of that name" in error for error in registry.errors)


def test_groups_and_completion_items() -> None:
    registry = ToolRegistry(
        {"shout": shout, "hidden": {"callback": simple(print, "hidden"), "visible": False}},
        {"loud": {"description": "Loud tools", "tools": ["shout"], "prompt": "Use ${tools}"}},
    )
    assert registry.group_names() == ["loud"]
    group = registry.group("loud")
    assert group is not None and group.tools == ["shout"] and group.prompt == "Use ${tools}"
    assert registry.completion_items() == [
        {"word": "@{loud}", "kind": "group", "menu": "Loud tools"},
        {"word": "@{shout}", "kind": "tool", "menu": "Upper-case the text."},
    ]
    assert registry.get("hidden") is not None  # hidden from completion, still usable


def test_builtins_load_and_user_entries_adjust_or_replace_them() -> None:
    plain = tool_registry()
    assert plain.errors == []
    if not plain.names():
        pytest.skip("no builtin tools yet")
    name = plain.names()[0]
    entry = plain.get(name)
    assert entry is not None and entry.builtin and entry.tool.name == name
    adjusted = tool_registry({name: {"opts": {"timeout": 9}, "description": "mine"}})
    adjusted_entry = adjusted.get(name)
    assert adjusted_entry is not None and adjusted_entry.opts["timeout"] == 9
    assert adjusted_entry.description == "mine"
    assert adjusted_entry.tool.run is entry.tool.run  # the same code, other opts
    replaced = tool_registry({name: calculator()})
    replaced_entry = replaced.get(name)
    assert replaced_entry is not None and not replaced_entry.builtin
    assert replaced_entry.tool.description.startswith("Perform simple")
    disabled = tool_registry({name: {"enabled": False}})
    assert name not in disabled.names()


def test_builtin_groups_reference_builtin_tools() -> None:
    registry = tool_registry()
    for group_name in registry.group_names():
        group = registry.group(group_name)
        assert group is not None
        assert [t for t in group.tools if registry.get(t) is None] == [], group_name
