"""Running subagents: at most `max_concurrent` at once, one answer each, unknown names refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest

from codecompanion.errors import ToolError
from codecompanion.messages import Message
from codecompanion.subagents import AgentOptions, ChatAgents
from codecompanion.subagents.session import SubagentSession
from tests.support.chat import RecordingView


class Parent:
    """The chat that calls the agent tool."""

    id = "chat-1"
    checkpoints = None

    def __init__(self) -> None:
        self.secrets: set[str] = set()
        self.view = RecordingView()
        self.adapter: Any = Adapter()

    @property
    def model(self) -> str | None:
        return "m"


class Adapter:
    name = "fake"

    class settings:  # noqa: N801  (the shape adapters have)
        model = "m"

    async def aclose(self) -> None:
        return None


class Tools:
    offered: list[str] = []

    def offered_entry(self, name: str) -> None:
        return None


class Driver:
    """Answers with the task's text once the test lets it."""

    running = 0
    most = 0

    def __init__(self, session: SubagentSession, gate: asyncio.Event) -> None:
        self.session = session
        self.gate = gate

    def message(self, text: str, context: list[Any]) -> Message:
        return Message(role="user", content=text)

    async def turn(self) -> Literal["success", "error", "cancelled"]:
        Driver.running += 1
        Driver.most = max(Driver.most, Driver.running)
        await self.gate.wait()
        Driver.running -= 1
        task = self.session.messages[len(self.session.messages) - 1].content
        self.session.add(Message(role="llm", content=f"done: {task}"))
        return "success"

    def cancel(self) -> None:
        return None


class Builders:
    def __init__(self, gate: asyncio.Event) -> None:
        self.gate = gate

    def adapter(self, name: str, model: str | None) -> tuple[Any, str | None]:
        return Adapter(), None

    def tools(self, session: SubagentSession, definition: Any) -> Any:
        return Tools()

    def context(self, session: SubagentSession) -> Any:
        return None

    def driver(self, session: SubagentSession) -> Driver:
        return Driver(session, self.gate)


async def test_at_most_max_concurrent_subagents_run_at_once(tmp_path: Path) -> None:
    gate = asyncio.Event()
    agents = ChatAgents(
        Parent(),
        tmp_path,
        dict,
        AgentOptions(max_concurrent=2),
        Builders(gate),  # type: ignore[arg-type]
    )
    runs = [asyncio.ensure_future(agents.run(None, f"task {n}", f"c{n}")) for n in range(5)]
    await asyncio.sleep(0.05)
    assert Driver.running == 2
    gate.set()
    replies = await asyncio.gather(*runs)
    assert Driver.most == 2
    assert [r.for_llm.rsplit("\n", 1)[-1] for r in replies] == [f"done: task {n}" for n in range(5)]
    assert replies[0].for_user.startswith("Subagent `general`: 0 calls")
    with pytest.raises(ToolError, match="no subagent called `nope`"):
        await agents.run("nope", "x", "c9")
