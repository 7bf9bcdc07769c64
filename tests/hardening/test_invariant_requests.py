"""The invariant through a real Chat: random batches of calls (approve, reject, cancel, edit,
timeout, exceptions, unknown tools, invalid JSON, schema violations, output_handler misuse, a
stop mid-batch) leave a history whose next request is valid for OpenAI, Anthropic and Gemini.

tests/tools/test_invariant.py proves every call id gets one result from the tool system; this
suite proves what the providers see afterwards, built by the real adapters' request builders.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta, ToolCallEvent
from codecompanion.chat.chat import Chat
from codecompanion.messages import Message, ToolCall
from codecompanion.ports import ApprovalDecision
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover
from tests.support.shapes import check_anthropic, check_gemini, check_openai
from tests.tools.test_invariant import build, call_kinds, spec

PROVIDERS = {
    "openai": lambda body: check_openai(body["messages"]),
    "anthropic": lambda body: check_anthropic(body["messages"]),
    "gemini": lambda body: check_gemini(body["contents"]),
}
BUILDERS = {
    name: create_adapter(AdapterSettings(name=name, api_key="k", model="m")) for name in PROVIDERS
}


async def stop_chat(self: Any, args: dict[str, Any], input: Any, output_handler: Any) -> Any:
    """The user stops the chat while this call runs."""
    self.tools.chat.stop()
    await asyncio.Event().wait()


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


def batch(
    round_: int, kinds: list[tuple[str, str, str]], stop_at: int | None
) -> tuple[list[ToolCall], dict[str, ApprovalDecision]]:
    calls, answers = build(kinds)
    renamed = [ToolCall(f"r{round_}_{c.id}", c.name, c.arguments, c.raw_arguments) for c in calls]
    if stop_at is not None and stop_at < len(renamed):
        renamed[stop_at] = ToolCall(renamed[stop_at].id, "stopper", {"n": 0, "mode": "ok"})
    return renamed, {f"r{round_}_{key}": value for key, value in answers.items()}


def make_chat(adapter: BatchAdapter, answers: dict[str, ApprovalDecision], yolo: bool) -> Chat:
    tools = {
        "asked": spec("asked", requires_approval=True),
        "read_only": spec("read_only", read_only=True),
        "free": spec("free"),
        "stopper": {**spec("stopper"), "cmds": [stop_chat]},
    }
    registry = ToolRegistry(tools, {})

    def tool_system(chat: Chat) -> ToolSystem:
        system = ToolSystem(
            chat=chat,
            registry=registry,
            approver=ScriptedApprover(by_call=answers),
            events=RecordingEvents(),
            cwd=".",
            yolo=yolo,
        )
        for name in tools:
            system.add_tool(name)
        return system

    return Chat(
        chat_id="inv",
        adapter=adapter,
        view=RecordingView(),
        events=RecordingEvents(),
        tool_factory=tool_system,
    )


async def settle(chat: Chat) -> None:
    for _ in range(2000):
        if not chat.busy:
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the turn did not end")


async def scenario(
    rounds: list[list[tuple[str, str, str]]], stops: list[int | None], yolo: bool, text: bool
) -> None:
    batches, answers = [], {}
    for index, kinds in enumerate(rounds):
        calls, scripted = batch(index, kinds, stops[index])
        batches.append(calls)
        answers.update(scripted)
    adapter = BatchAdapter(batches, text)
    chat = make_chat(adapter, answers, yolo)
    assert chat.submit("go")
    await settle(chat)
    while adapter.batches:  # a cancelled batch ends the turn; the user asks again
        assert chat.submit("go on")
        await settle(chat)
    assert chat.submit("one more question")
    await settle(chat)

    made = [call.id for calls in batches for call in calls]
    results = [m.tool_call_id for m in chat.messages if m.role == "tool"]
    assert Counter(results) == Counter(made)
    assert chat.messages.pending_calls() == []
    history = adapter.requests[-1]
    assert history[-1].content == "one more question"
    for name, check in PROVIDERS.items():
        body = BUILDERS[name].build_request(history, chat.tools.schemas(), "m").body
        check(body)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rounds=st.lists(st.lists(call_kinds, min_size=1, max_size=4), min_size=1, max_size=2),
    stops=st.lists(st.none() | st.integers(0, 3), min_size=2, max_size=2),
    yolo=st.booleans(),
    text=st.booleans(),
)
def test_the_next_request_is_valid_for_every_provider(
    rounds: list[list[tuple[str, str, str]]], stops: list[int | None], yolo: bool, text: bool
) -> None:
    asyncio.run(scenario(rounds, stops, yolo, text))
