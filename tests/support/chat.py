"""Small fakes around a chat's turn loop: a scripted adapter, a recording view, echo tools."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codecompanion import render_ops
from codecompanion.adapters.base import (
    AdapterSettings,
    Event,
)
from codecompanion.chat.chat import Chat
from codecompanion.messages import Message, ToolCall, ToolResult
from codecompanion.persistence.history import ChatStore
from codecompanion.render_ops import Append, Block, RenderOp
from codecompanion.tools.runtime.approval_policy import ApprovalMemory
from codecompanion.tools.runtime.protocol import CallWatch


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


@dataclass
class RoundOutcome:
    """What one round of EchoTools gives the chat."""

    status: str
    auto_submit: bool
    results: int


class WatchSlot:
    """Where a chat's checkpoints hang their watch (a real tool system's `Reporter`)."""

    def __init__(self) -> None:
        self.watch: CallWatch | None = None


class EchoTools:
    """A minimal tool system: answers every call with its arguments; can block until released."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.reporter = WatchSlot()
        self.gate = asyncio.Event()
        self.gate.set()
        self.cancelled = False
        self.approvals = ApprovalMemory()  # what the chat shows after each round
        self.yolo = False

    def parse_user_message(self, text: str) -> str:
        return text

    def reset_rounds(self) -> None:
        pass

    def system_prompts(self) -> list[tuple[str, str]]:
        return [("tool:echo", "echo prompt")]

    def schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "echo"}}]

    def read_only(self, calls: list[ToolCall]) -> bool:
        return all(call.name == "echo" for call in calls)

    def malformed(self, call: ToolCall) -> bool:
        return False

    async def prepare(self) -> list[str]:
        return []

    async def run(self, calls: list[ToolCall]) -> RoundOutcome:
        for call in calls:
            self.chat.tool_status(call, "pending")
        await self.gate.wait()
        for call in calls:
            self.chat.record_tool_result(call, ToolResult("success", f"echo {call.arguments}"))
        return RoundOutcome("success", True, len(calls))

    def cancel(self) -> None:
        self.cancelled = True
        for call in self.chat.messages.pending_calls():
            self.chat.record_tool_result(call, ToolResult("cancelled", "cancelled"))

    def to_state(self) -> dict[str, Any]:
        return {}


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
    """A chat with `adapter`, a recording view and `tools` (echo tools unless given), saved
    under `tmp_path` if given."""
    view = RecordingView()
    store = ChatStore(tmp_path / "chats") if tmp_path else None
    chat = Chat(
        chat_id="c1",
        adapter=adapter,
        view=view,
        tool_factory=tools or EchoTools,
        store=store,
    )
    return chat, view


async def finish(chat: Chat) -> None:
    """Wait (5 s at most) for the chat's turn to end."""
    assert chat._task is not None
    await asyncio.wait_for(asyncio.shield(chat._task), 5)
