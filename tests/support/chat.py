"""Small fakes around a chat's turn loop (a scripted adapter, a recording view) and small real
tools for its built tool system."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codecompanion import render_ops
from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import (
    AdapterSettings,
    Event,
)
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer
from codecompanion.messages import Message
from codecompanion.persistence.history import ChatStore
from codecompanion.render_ops import Append, Block, RenderOp
from codecompanion.tools import tool_registry
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.builder import built_chat, built_tool_system
from tests.support.checkpoints import write
from tests.support.fakes import RecordingEvents, ScriptedApprover


class ScriptedAdapter:
    """Plays one scripted list of events per request and records what it was sent."""

    def __init__(self, *scripts: list[Any]) -> None:
        self.name = "scripted"
        self.settings = AdapterSettings(name="scripted", model="m1")
        self.scripts = list(scripts)
        self.requests: list[list[Message]] = []
        self.release = asyncio.Event()
        self.release.set()

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        self.requests.append([Message.from_dict(m.to_dict()) for m in messages])
        for item in self.scripts.pop(0):
            await self.release.wait()
            if isinstance(item, Exception):
                raise item
            yield item

    async def list_models(self) -> list[str]:
        return ["m1"]

    async def aclose(self) -> None:
        pass


@dataclass
class RecordingView:
    """Keeps every render operation and notice."""

    ops: list[RenderOp] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(default_factory=list)

    def render(self, ops: list[RenderOp]) -> None:
        self.ops.extend(ops)

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append((message, level))

    def flush(self) -> None:
        pass

    def appended(self) -> str:
        return "".join(op.text for op in self.ops if isinstance(op, Append))

    def text(self) -> str:
        """Everything appended or written as a block."""
        return "".join(op.text for op in self.ops if isinstance(op, (Append, Block)))

    def events(self) -> list[str]:
        return [op.name for op in self.ops if isinstance(op, render_ops.Event)]


Before = Callable[[str, dict[str, Any]], Awaitable[None]]


def _schema(name: str, description: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {}, "additionalProperties": True}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


class EchoTool:
    """Two small real tools, registered as a user's config registers tools, for the chat's real
    tool system (`Workspace.tool_system`): `echo` (read-only) answers with its arguments and
    `write_things` (not read-only) writes the files its arguments name (`{"path": text or null}`)
    in the project, then answers the same way. Both wait while `gate` is clear; `before` runs as
    each starts (given the tool's name and arguments)."""

    def __init__(self, cwd: Path | None = None, before: Before | None = None) -> None:
        self.cwd = cwd or Path(tempfile.gettempdir())
        self.before = before
        self.gate = asyncio.Event()
        self.gate.set()
        self.approver = ScriptedApprover()
        self.events = RecordingEvents()

    async def _answer(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.before is not None:
            await self.before(name, args)
        await self.gate.wait()
        return {"status": "success", "data": f"echo {args}"}

    async def _echo(self, _tool: Any, args: dict[str, Any], _input: Any) -> dict[str, Any]:
        return await self._answer("echo", args)

    async def _write(self, tool: Any, args: dict[str, Any], _input: Any) -> dict[str, Any]:
        write(tool.tools.cwd, {k: None if v is None else v.encode() for k, v in args.items()})
        return await self._answer("write_things", args)

    def registry(self) -> ToolRegistry:
        """The two tools as a config file's `tools` table."""
        echo = {
            "name": "echo",
            "cmds": [self._echo],
            "schema": _schema("echo", "Answer with the arguments"),
            "system_prompt": "echo prompt",
            "opts": {"read_only": True},
        }
        writes = {
            "name": "write_things",
            "cmds": [self._write],
            "schema": _schema("write_things", "Write files in the project"),
        }
        return tool_registry({"echo": echo, "write_things": writes}, {}, tool_opts={})

    def __call__(self, chat: Chat) -> ToolSystem:
        """The chat's tool system as the product builds it, both tools offered."""
        system = built_tool_system(
            chat=chat,
            registry=self.registry(),
            approver=self.approver,
            events=self.events,
            cwd=self.cwd,
        )
        system.add_tool("echo")
        system.add_tool("write_things")
        return system


def _value_of(value: str) -> str:
    return f"value of {value}"


@dataclass
class LookupTool:
    """A tool of one required string argument, registered as a user's config registers tools
    (cmds form, a schema that refuses other arguments): it answers `answer(value)` and keeps
    every value it was called with in `asked`."""

    name: str = "lookup"
    key: str = "key"
    description: str = "Look a key up"
    answer: Callable[[str], str] = _value_of
    asked: list[str] = field(default_factory=list)

    def _run(self, _tool: Any, args: dict[str, Any], *_: Any) -> dict[str, Any]:
        self.asked.append(args[self.key])
        return {"status": "success", "data": self.answer(args[self.key])}

    def spec(self) -> dict[str, Any]:
        """The tool as a config file's `tools` table holds it."""
        parameters = {
            "type": "object",
            "properties": {self.key: {"type": "string"}},
            "required": [self.key],
            "additionalProperties": False,
        }
        function = {"name": self.name, "description": self.description, "parameters": parameters}
        return {
            "name": self.name,
            "cmds": [self._run],
            "schema": {"type": "function", "function": function},
            "output": {
                "success": lambda self, tools, cmd, out: tools.chat.add_tool_output(self, out[0]),
            },
        }


async def loopback_turn(
    server: LoopbackServer, cwd: Path, tool: LookupTool, request: str
) -> tuple[Chat, RecordingView]:
    """One turn of a chat on the OpenAI-compatible adapter against `server`, `request` sent
    with `tool` offered by the built tool system in YOLO mode (nothing asked), awaited to its
    end (20 s at most); the adapter is closed after it."""
    settings = AdapterSettings(name="openai_compatible", url=server.url + "/v1", model="m")
    adapter = create_adapter(settings)
    registry = tool_registry({tool.name: tool.spec()}, {}, tool_opts={})
    view = RecordingView()
    chat = built_chat(
        adapter, registry, cwd, view, chat_id="loopback", opts={"timeout": 5}, yolo=True
    )
    try:
        assert chat.submit(request)
        assert chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat._task), 20)
    finally:
        await adapter.aclose()
    return chat, view


def chat_requests(server: LoopbackServer) -> list[dict[str, Any]]:
    """The bodies of the chat requests the server got, in order."""
    return [r.json() for r in server.requests if r.path.endswith("/chat/completions")]


def record_flushes(
    chat: Chat, view: RecordingView, shown: Callable[[], str]
) -> list[tuple[str, int]]:
    """At each flush of `view`: what `shown` says is on screen, and how many answers are stored."""
    flushed: list[tuple[str, int]] = []

    def flush() -> None:
        flushed.append((shown(), sum(m.role == "llm" for m in chat.messages)))

    view.flush = flush  # type: ignore[method-assign]
    return flushed


def make_chat(
    adapter: Any, tmp_path: Path | None = None, tools: Callable[[Chat], Any] | None = None
) -> tuple[Chat, RecordingView]:
    """A chat with `adapter`, a recording view and `tools` (the built tool system with the
    `EchoTool` tools unless given), saved under `tmp_path` if given."""
    view = RecordingView()
    store = ChatStore(tmp_path / "chats") if tmp_path else None
    chat = Chat(
        chat_id="c1",
        adapter=adapter,
        view=view,
        tool_factory=tools or EchoTool(),
        store=store,
    )
    return chat, view


async def finish(chat: Chat) -> None:
    """Wait (5 s at most) for the chat's turn to end."""
    assert chat._task is not None
    await asyncio.wait_for(asyncio.shield(chat._task), 5)
