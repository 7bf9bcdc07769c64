"""CodeCompanion's registry rules: a user's tool named like a builtin group wins, a group with
no enabled tool is hidden; a command's `flag`; a raising cmd's error text is what it raised."""

from __future__ import annotations

import sys
from typing import Any

from codecompanion.tools import tool_registry
from codecompanion.tools.model.contract import raised_text
from codecompanion.tools.model.registry import ToolRegistry
from tests.support.tools import call, make, simple


def test_a_user_tool_named_like_a_builtin_group_wins() -> None:
    mine = simple(lambda self, args, input: "mine", "files")
    registry = tool_registry({"files": mine})
    assert registry.get("files") is not None and registry.group("files") is None
    words = [item["word"] for item in registry.completion_items()]
    assert words.count("@{files}") == 1
    assert next(i for i in registry.completion_items() if i["word"] == "@{files}")["kind"] == "tool"
    assert registry.group("agent") is not None  # the other builtin groups stay


def test_a_group_whose_tools_are_all_disabled_is_hidden() -> None:
    tools: dict[str, Any] = {
        "a": {"callback": simple(lambda self, args, input: "a", "a"), "enabled": False},
        "b": simple(lambda self, args, input: "b", "b"),
    }
    groups = {"off": {"tools": ["a"]}, "on": {"tools": ["a", "b"]}}
    registry = ToolRegistry(tools, groups)
    assert registry.group("off") is None and registry.group("on") is not None
    assert registry.group_names() == ["on"]
    assert "@{off}" not in [item["word"] for item in registry.completion_items()]


def flagged(*cmds: Any) -> dict[str, Any]:
    tool = simple(None, "check")
    tool["cmds"] = list(cmds)
    return tool


async def test_a_command_flag_records_whether_it_succeeded() -> None:
    ok = {"cmd": [sys.executable, "-c", "print('fine')"], "flag": "testing"}
    bad = {"cmd": f"{sys.executable} -c 'raise SystemExit(3)'", "flag": "linting"}
    h = make({"check": flagged(ok), "lint": {**flagged(bad), "name": "lint"}})
    seen: list[Any] = []
    h.system.registry.get("check").tool.output["success"] = lambda self, tools, cmd, stdout: (
        seen.append(dict(tools.chat.tool_registry.flags))
    )
    first, second = call("check"), call("lint")
    await h.run(first)
    await h.run(second)
    assert h.system.notes.flags == {"testing": True, "linting": False}
    assert seen == [{"testing": True}]
    assert "fine" in h.chat.result(first.id).for_llm
    assert "exit code 3" in h.chat.result(second.id).for_llm


async def test_a_raising_cmd_reads_as_what_it_raised() -> None:
    def plain(self: Any, args: Any, input: Any) -> Any:
        raise RuntimeError("the build server is down")

    def keyed(self: Any, args: Any, input: Any) -> Any:
        return {}["missing"]

    h = make({"p": simple(plain, "p"), "k": simple(keyed, "k")})
    p, k = call("p"), call("k")
    await h.run(p, k)
    assert "the build server is down" in h.chat.result(p.id).for_llm
    assert "RuntimeError" not in h.chat.result(p.id).for_llm
    assert "KeyError: 'missing'" in h.chat.result(k.id).for_llm
    assert raised_text(Exception()) == "Exception"
    zero = ZeroDivisionError("division by zero")
    assert raised_text(zero) == "ZeroDivisionError: division by zero"


async def test_reload_does_not_call_the_tools_of_an_on_demand_group_gone() -> None:
    from codecompanion.tools.compat.coerce import coerce
    from codecompanion.tools.model.registry import Group, ToolEntry

    def lazy_registry() -> ToolRegistry:
        registry = ToolRegistry({}, builtins=False)
        ping = coerce(simple(lambda self, args, input: "pong", "x_ping"))

        async def load() -> list[ToolEntry]:
            return [ToolEntry(name="x_ping", tool=ping, description="ping", opts={})]

        registry.add_lazy_group(Group(name="mcp:x", tools=[]), load)
        return registry

    h = make({})
    h.system.registry = lazy_registry()
    assert h.system.add_group("mcp:x")
    await h.system.prepare()
    assert "x_ping" in h.system.offered
    # A reload makes a new registry: the server's tools come back at the next call.
    assert h.system.reconfigure(lazy_registry(), {}) == []
