"""A provider that repeats a tool-call id (twice in one answer, or again in a later answer): every
call runs, gets its own result under its own id, and the next request is valid for OpenAI,
Anthropic and Gemini."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from codecompanion.messages import Message, MessageStore, ToolCall
from tests.support.batches import (
    BUILDERS,
    PROVIDERS,
    BatchAdapter,
    make_chat,
    settle,
)


def call(call_id: str, n: int, name: str = "free") -> ToolCall:
    return ToolCall(call_id, name, {"n": n, "mode": "ok"})


# Each scenario: the batches the model sends, one per answer.
SCENARIOS: dict[str, list[list[ToolCall]]] = {
    "twice-in-one-answer": [[call("c1", 0), call("c1", 1)]],
    "three-times-mixed-tools": [[call("c1", 0), call("c1", 1, "read_only"), call("c1", 2)]],
    "again-in-the-next-answer": [[call("c1", 0)], [call("c1", 1)]],
    "repeat-of-a-renamed-id": [[call("c1", 0), call("c1", 1)], [call("c1_2", 2), call("c1", 3)]],
    "empty-ids": [[call("", 0), call("", 1)], [call("", 2)]],
}


async def scenario(batches: list[list[ToolCall]], yolo: bool) -> None:
    adapter = BatchAdapter([list(b) for b in batches], text_first=True)
    chat = make_chat(adapter, {}, yolo)
    assert chat.submit("go")
    await settle(chat)
    assert chat.submit("one more question")
    await settle(chat)

    made = [c for m in chat.messages if m.role == "llm" for c in m.tool_calls]
    results = [m for m in chat.messages if m.role == "tool"]
    sent = [c for b in batches for c in b]
    assert len(made) == len(sent)
    assert len({c.id for c in made}) == len(made), [c.id for c in made]
    assert Counter(m.tool_call_id for m in results) == Counter(c.id for c in made)
    # Each call's own result: the tools answer with the call's `n`.
    by_id = {m.tool_call_id: m for m in results}
    for made_call, sent_call in zip(made, sent, strict=True):
        assert made_call.arguments == sent_call.arguments
        assert not by_id[made_call.id].is_error, by_id[made_call.id].content
        assert str(sent_call.arguments["n"]) in (by_id[made_call.id].content or "")
    history = adapter.requests[-1]
    assert history[-1].content == "one more question"
    for name, check in PROVIDERS.items():
        body = BUILDERS[name].build_request(history, chat.tools.schemas(), "m").body
        check(body)
        json.dumps(body)


@pytest.mark.parametrize("yolo", [False, True])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_repeated_ids_each_get_their_own_result(name: str, yolo: bool) -> None:
    asyncio.run(scenario(SCENARIOS[name], yolo))


def test_a_saved_history_with_repeated_ids_is_repaired_on_restore() -> None:
    """Chats saved before ids were made unique: each result stays with its own call."""
    history = [
        Message(role="user", content="go"),
        Message(role="llm", tool_calls=[call("c1", 0), call("c1", 1)]),
        Message(role="tool", content="0", tool_call_id="c1", tool_name="free"),
        Message(role="tool", content="1", tool_call_id="c1", tool_name="free"),
        Message(role="llm", tool_calls=[call("c1", 2)]),
        Message(role="tool", content="2", tool_call_id="c1", tool_name="free"),
        Message(role="llm", content="done"),
        Message(role="user", content="next"),
    ]
    store = MessageStore.from_list([m.to_dict() for m in history])
    made = [c.id for m in store if m.role == "llm" for c in m.tool_calls]
    results = [(m.tool_call_id, m.content) for m in store if m.role == "tool"]
    assert made == ["c1", "c1_2", "c1_3"]
    assert results == [("c1", "0"), ("c1_2", "1"), ("c1_3", "2")]
    for name, check in PROVIDERS.items():
        check(BUILDERS[name].build_request(list(store), [], "m").body)
