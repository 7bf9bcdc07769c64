"""Clearing a chat (gx) while its turn still runs leaves nothing of that turn behind: the next
request is a fresh conversation that every provider accepts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from codecompanion.adapters.base import Event, Finish, TextDelta
from codecompanion.messages import Message, ToolCall
from tests.support.batches import (
    BUILDERS,
    PROVIDERS,
    BatchAdapter,
    make_chat,
    settle,
)
from tests.support.fakes import WAIT


class StallingAdapter(BatchAdapter):
    """Streams a little of the first answer, then waits until cancelled."""

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        self.requests.append(list(messages))
        if len(self.requests) == 1:
            yield TextDelta("half an answer ")
            await asyncio.Event().wait()
        yield TextDelta("fresh answer")
        yield Finish("stop")


async def clear_then_ask(adapter: BatchAdapter, answers: dict[str, Any]) -> None:
    chat = make_chat(adapter, answers, yolo=False)
    assert chat.submit("first question")
    await asyncio.sleep(0.02)
    assert chat.busy
    chat.clear()
    await settle(chat)
    assert chat.submit("a fresh start")
    await settle(chat)
    history = adapter.requests[-1]
    assert [m.role for m in history] == ["system", "user"], [(m.role, m.content) for m in history]
    for name, check in PROVIDERS.items():
        check(BUILDERS[name].build_request(history, [], "m").body)


async def test_clear_while_tools_run() -> None:
    calls = [ToolCall("a", "asked", {"n": 1, "mode": "ok"}), ToolCall("b", "free", {})]
    await clear_then_ask(BatchAdapter([calls], text_first=True), {"a": WAIT})


async def test_clear_while_the_answer_streams() -> None:
    await clear_then_ask(StallingAdapter([], text_first=False), {})
