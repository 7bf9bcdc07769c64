"""A chat whose provider answers with scripted batches of tool calls; each provider's checker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta, ToolCallEvent
from codecompanion.chat.chat import Chat
from codecompanion.messages import Message, ToolCall
from codecompanion.ports import ApprovalDecision
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.builder import built_tool_system
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover
from tests.support.shapes import check_anthropic, check_gemini, check_openai
from tests.support.tool_calls import spec

PROVIDERS = {
    "openai": lambda body: check_openai(body["messages"]),
    "anthropic": lambda body: check_anthropic(body["messages"]),
    "gemini": lambda body: check_gemini(body["contents"]),
}


BUILDERS = {
    name: create_adapter(AdapterSettings(name=name, api_key="k", model="m")) for name in PROVIDERS
}


class BatchAdapter:
    """Answers each request with the next scripted batch of calls, then with plain text."""

    def __init__(self, batches: list[list[ToolCall]], text_first: bool) -> None:
        self.name = "batches"
        self.settings = AdapterSettings(name="batches", model="m")
        self.batches = list(batches)
        self.text_first = text_first
        self.requests: list[list[Message]] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        self.requests.append([Message.from_dict(m.to_dict()) for m in messages])
        if not self.batches:
            yield TextDelta("done")
            yield Finish("stop")
            return
        if self.text_first:
            yield TextDelta("Let me use tools.")
        for call in self.batches.pop(0):
            yield ToolCallEvent(call)
        yield Finish("tool_calls")

    async def list_models(self) -> list[str]:
        return ["m"]

    async def aclose(self) -> None:
        pass


def make_chat(adapter: BatchAdapter, answers: dict[str, ApprovalDecision], yolo: bool) -> Chat:
    made: list[Chat] = []

    async def stop_chat(self: Any, args: dict[str, Any], input: Any, output_handler: Any) -> Any:
        """The user stops the chat while this call runs."""
        made[0].stop()
        await asyncio.Event().wait()

    tools = {
        "asked": spec("asked", requires_approval=True),
        "read_only": spec("read_only", read_only=True),
        "free": spec("free"),
        "stopper": {**spec("stopper"), "cmds": [stop_chat]},
    }
    registry = ToolRegistry(tools, {})

    def tool_system(chat: Chat) -> ToolSystem:
        system = built_tool_system(
            chat=chat,
            registry=registry,
            approver=ScriptedApprover(by_call=answers),
            events=RecordingEvents(),
            cwd=Path("."),
            yolo=yolo,
        )
        for name in tools:
            system.add_tool(name)
        return system

    chat = Chat(
        chat_id="inv",
        adapter=adapter,
        view=RecordingView(),
        tool_factory=tool_system,
    )
    made.append(chat)
    return chat


async def settle(chat: Chat) -> None:
    for _ in range(2000):
        if not chat.busy:
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the turn did not end")
