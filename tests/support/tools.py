"""A tool system wired to the fakes, and CodeCompanion's calculator transcribed to Python."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codecompanion.messages import ToolCall
from codecompanion.tools import tool_registry
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.builder import built_tool_system
from tests.support.fakes import RecordingChat, RecordingEvents, ScriptedApprover

CALCULATOR_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Perform simple mathematical operations on a user's machine",
        "parameters": {
            "type": "object",
            "properties": {
                "num1": {"type": "integer", "description": "The first number in the calculation"},
                "num2": {"type": "integer", "description": "The second number in the calculation"},
                "operation": {
                    "type": "string",
                    "enum": ["add", "subtract", "multiply", "divide"],
                    "description": "The mathematical operation to perform on the two numbers",
                },
            },
            "required": ["num1", "num2", "operation"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def calculate(self: Any, args: dict[str, Any], input: Any) -> dict[str, Any]:
    """CodeCompanion's calculator cmd, key for key (a 3-argument function)."""
    num1, num2, operation = args.get("num1"), args.get("num2"), args.get("operation")
    if num1 is None:
        return {"status": "error", "data": "First number is missing or invalid"}
    if num2 is None:
        return {"status": "error", "data": "Second number is missing or invalid"}
    if operation == "add":
        result = num1 + num2
    elif operation == "subtract":
        result = num1 - num2
    elif operation == "multiply":
        result = num1 * num2
    elif operation == "divide":
        if num2 == 0:
            return {"status": "error", "data": "Cannot divide by zero"}
        result = num1 / num2
    else:
        return {"status": "error", "data": "Invalid operation"}
    return {"status": "success", "data": result}


def calculator(**opts: Any) -> dict[str, Any]:
    """CodeCompanion's calculator as a plain dict, with `opts` added."""
    return {
        "name": "calculator",
        "cmds": [calculate],
        "system_prompt": "## Calculator Tool (`calculator`)\n\nDo maths on two numbers.",
        "schema": CALCULATOR_SCHEMA,
        "opts": dict(opts),
        "handlers": {
            "setup": lambda self, tools: self.state.setdefault("setup", True),
            "on_exit": lambda self, tools: None,
        },
        "output": {
            "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(
                self, str(stdout[0])
            ),
            "error": lambda self, tools, cmd, stderr: None,
            "prompt": lambda self, tools: (
                f"Perform the calculation `{self.args['num1']} {self.args['operation']} "
                f"{self.args['num2']}`?"
            ),
        },
    }


@dataclass
class Harness:
    """A ToolSystem and the fakes around it."""

    system: ToolSystem
    chat: RecordingChat
    approver: ScriptedApprover
    events: RecordingEvents

    async def run(self, *calls: ToolCall) -> Any:
        """Run one batch."""
        return await self.system.run(list(calls))


def make(
    tools: dict[str, Any],
    *,
    approver: ScriptedApprover | None = None,
    offer: bool = True,
    opts: dict[str, Any] | None = None,
    yolo: bool = False,
    tool_opts: dict[str, dict[str, Any]] | None = None,
    groups: dict[str, Any] | None = None,
    cwd: Path | None = None,
    adapters: dict[str, dict[str, Any]] | None = None,
) -> Harness:
    """A system over `tools` only (no builtins), offering all of them unless `offer` is False;
    made by the product's builder (tests/support/builder.py)."""
    registry = ToolRegistry(tools, groups or {}, tool_opts=tool_opts or {})
    assert registry.errors == [] or not tools, registry.errors
    chat, events = RecordingChat(), RecordingEvents()
    approver = approver or ScriptedApprover()
    system = built_tool_system(
        chat=chat,
        registry=registry,
        approver=approver,
        events=events,
        cwd=cwd or Path.cwd(),
        opts=opts or {},
        yolo=yolo,
        adapters=adapters,
    )
    if offer:
        for name in tools:
            assert system.add_tool(name), name
    return Harness(system, chat, approver, events)


_ids = itertools.count(1)


def call(name: str, args: dict[str, Any] | None = None, *, id: str | None = None) -> ToolCall:
    """A call with a fresh id."""
    return ToolCall(id or f"call_{next(_ids)}", name, dict(args or {}))


def raw_call(name: str, raw: str, *, id: str | None = None) -> ToolCall:
    """A call whose arguments were not valid JSON."""
    return ToolCall(id or f"call_{next(_ids)}", name, {}, raw)


def simple(
    fn: Any, name: str = "t", properties: dict[str, Any] | None = None, **opts: Any
) -> dict[str, Any]:
    """A one-cmd tool dict around `fn` with an open schema."""
    return {
        "name": name,
        "cmds": [fn],
        "schema": {
            "type": "function",
            "function": {
                "name": name,
                "description": f"test tool {name}",
                "parameters": {"type": "object", "properties": properties or {}},
            },
        },
        "opts": opts,
    }


def command_tool(cmds: list[Any], env: Any = None, **opts: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "runner",
        "cmds": cmds,
        "schema": {
            "type": "function",
            "function": {
                "name": "runner",
                "description": "runs commands",
                "parameters": {"type": "object", "properties": {"lang": {"type": "string"}}},
            },
        },
        "opts": opts,
    }
    if env is not None:
        spec["env"] = env
    return spec


def builtin_system(
    cwd: Path,
    *offer: str,
    registry: ToolRegistry | None = None,
    approver: ScriptedApprover | None = None,
    tool_opts: dict[str, dict[str, Any]] | None = None,
    opts: dict[str, Any] | None = None,
    **settings: Any,
) -> tuple[ToolSystem, RecordingChat]:
    """A tool system in `cwd` over the builtin tools (or `registry`), without auto-submit,
    offering each of `offer` (a group or a tool); and its chat, made by the product's builder.
    `settings` go to it (editor, yolo, permissions); with `sandbox`, `mode` or `tls` (tests
    of those seams) the ToolSystem is made directly with them."""
    if registry is None:
        registry = tool_registry({}, {}, tool_opts=tool_opts or {})
    assert registry.errors == [], registry.errors
    chat = RecordingChat()
    build: Any = built_tool_system
    if settings.keys() & {"sandbox", "mode", "tls"}:
        build = ToolSystem  # the sandbox and TLS tests hand in their own
    system = build(
        chat=chat,
        registry=registry,
        approver=approver or ScriptedApprover(),
        events=RecordingEvents(),
        cwd=cwd,
        opts={"auto_submit": False, **(opts or {})},
        **settings,
    )
    for name in offer:
        assert system.add_group(name) or system.add_tool(name), name
    return system, chat
