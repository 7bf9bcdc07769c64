"""The chat's turn loop: a scripted adapter and a recording view (tests/support/chat.py) around
the tool system the workspace builds, with the small real tools of `EchoTool`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from codecompanion import render_ops
from codecompanion.adapters.base import (
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from codecompanion.errors import ContextTooLong, StreamInterrupted
from codecompanion.messages import Message, MessageStore, ToolCall
from codecompanion.persistence.history import ChatStore
from codecompanion.render_ops import Block
from tests.support.chat import EchoTool, ScriptedAdapter, finish, make_chat, record_flushes


async def test_streamed_text_lands_and_is_stored(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([TextDelta("Hel"), TextDelta("lo"), Usage(total_tokens=7), Finish()])
    chat, view = make_chat(adapter, tmp_path)
    assert chat.submit("hi")
    await finish(chat)
    assert view.appended() == "Hello"
    llm = [m for m in chat.messages if m.role == "llm"]
    assert [m.content for m in llm] == ["Hello"]
    assert any(isinstance(op, render_ops.Usage) and "7 tokens" in op.text for op in view.ops)
    assert view.events()[-1] == "ChatDone"
    saved = ChatStore(tmp_path / "chats").load("c1")
    assert saved is not None and saved["messages"][-1]["content"] == "Hello"


async def test_the_answers_tail_is_sent_to_the_buffer_before_the_answer_is_stored() -> None:
    adapter = ScriptedAdapter([TextDelta("Hel"), TextDelta("lo"), Usage(total_tokens=7), Finish()])
    chat, view = make_chat(adapter)
    flushed = record_flushes(chat, view, view.appended)
    assert chat.submit("hi")
    await finish(chat)
    assert ("Hello", 0) in flushed


async def test_a_requests_token_estimate_is_counted_after_the_request_has_left() -> None:
    call = ToolCall("call_1", "echo", {"x": 1})
    refusal = ContextTooLong("too long")
    adapter = ScriptedAdapter(
        [ToolCallEvent(call), Finish("tool_calls")], [refusal], [TextDelta("done"), Finish()]
    )
    chat, _view = make_chat(adapter)
    streamed: list[object] = []  # events the chat has taken so far
    scripted = adapter.stream

    async def stream(messages: Any, tools: Any) -> Any:
        async for event in scripted(messages, tools):
            await asyncio.sleep(0)  # the answer takes a turn of the loop to come, as on a wire
            streamed.append(event)
            yield event

    adapter.stream = stream  # type: ignore[method-assign]
    counted: list[tuple[int, int]] = []  # at each estimate: requests sent, events taken
    estimate = chat.context.sending

    def sending() -> None:
        counted.append((len(adapter.requests), len(streamed)))
        estimate()

    chat.context.sending = sending  # type: ignore[method-assign]
    chat.submit("use echo")
    await finish(chat)
    # Each request is counted once it is out and before its answer (not between the tool
    # results and it); the refused one is counted too, so the refusal still corrects it.
    assert counted == [(1, 0), (2, 2), (3, 2)]
    assert chat.context.budget.ledger.last_estimate is not None


async def test_tool_round_trip_sends_results_back() -> None:
    call = ToolCall("call_1", "echo", {"x": 1})
    adapter = ScriptedAdapter([ToolCallEvent(call), Finish("tool_calls")], [TextDelta("done")])
    chat, view = make_chat(adapter)
    chat.submit("use echo")
    await finish(chat)
    second = adapter.requests[1]
    assert [m.role for m in second][-2:] == ["llm", "tool"]
    assert second[-1].tool_call_id == "call_1" and second[-1].content == "echo {'x': 1}"
    assert second[0].role == "system" and second[1].tag == "<tool>echo</tool>"
    # The round after the tool results starts below the tool output, not glued to it.
    assert any(isinstance(op, Block) and op.text == "done" for op in view.ops)


async def test_empty_and_busy_submits_are_refused() -> None:
    adapter = ScriptedAdapter([TextDelta("a")])
    chat, view = make_chat(adapter)
    assert not chat.submit("   ")
    adapter.release.clear()
    assert chat.submit("first")
    await asyncio.sleep(0)
    assert not chat.submit("second")
    assert [level for _, level in view.notices] == ["info", "warn"]
    adapter.release.set()
    await finish(chat)
    assert len(adapter.requests) == 1


async def test_broken_stream_keeps_partial_answer_and_next_submit_works() -> None:
    adapter = ScriptedAdapter(
        [TextDelta("partial"), StreamInterrupted("connection dropped")],
        [TextDelta("ok")],
    )
    chat, view = make_chat(adapter)
    chat.submit("one")
    await finish(chat)
    partial = [m for m in chat.messages if m.role == "llm"][0]
    assert partial.content == "partial" and partial.extra["incomplete"] == "connection dropped"
    assert ("connection dropped", "error") in view.notices
    assert chat.submit("two")
    await finish(chat)
    assert [m.content for m in chat.messages if m.role == "llm"][-1] == "ok"


async def test_calls_of_an_interrupted_answer_are_dropped() -> None:
    call = ToolCall("call_1", "echo", {})
    adapter = ScriptedAdapter([ToolCallEvent(call), StreamInterrupted("read timeout")])
    chat, _ = make_chat(adapter)
    chat.submit("x")
    await finish(chat)
    assert chat.messages.pending_calls() == []
    assert not any(m.tool_calls for m in chat.messages)


async def test_stop_while_tools_run_answers_every_call() -> None:
    calls = [ToolCall("a", "echo", {}), ToolCall("b", "echo", {})]
    adapter = ScriptedAdapter([ToolCallEvent(calls[0]), ToolCallEvent(calls[1]), Finish()])
    echo = EchoTool()
    echo.gate.clear()
    chat, view = make_chat(adapter, tools=echo)
    chat.submit("x")
    while not any(op.kind == "tool" for op in view.ops):
        await asyncio.sleep(0.001)
    assert chat.stop()
    await finish(chat)  # the turn ends cleanly: a stop is not an error
    results = [m for m in chat.messages if m.role == "tool"]
    assert sorted(m.tool_call_id or "" for m in results) == ["a", "b"]
    assert "ChatStopped" in view.events()
    assert len(adapter.requests) == 1


async def test_reasoning_is_shown_under_its_own_heading() -> None:
    adapter = ScriptedAdapter([ReasoningDelta("think"), TextDelta("answer")])
    chat, view = make_chat(adapter)
    chat.submit("q")
    await finish(chat)
    blocks = [op.text for op in view.ops if isinstance(op, Block)]
    assert blocks[:2] == ["### Reasoning\n\n", "### Response\n\n"]
    assert [m.reasoning for m in chat.messages if m.role == "llm"] == ["think"]


async def test_regenerate_drops_the_last_answer() -> None:
    adapter = ScriptedAdapter([TextDelta("first")], [TextDelta("second")])
    chat, _ = make_chat(adapter)
    chat.submit("q")
    await finish(chat)
    assert chat.regenerate()
    await finish(chat)
    assert [m.content for m in chat.messages if m.role == "llm"] == ["second"]
    assert [m.role for m in adapter.requests[1]][-1] == "user"


def test_restored_messages_keep_ids_unique() -> None:
    store = MessageStore.from_list(
        [Message(role="user", content="a").to_dict() | {"_meta": {"id": 5, "cycle": 2}}]
    )
    added = store.add(Message(role="llm", content="b"))
    assert added.meta.id == 6 and added.meta.cycle == 2


class CountingStore(ChatStore):
    """A real store that also records how many messages each write held."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.writes: list[int] = []

    def save(self, chat_id: str, state: dict[str, Any], durable: bool = True) -> None:
        self.writes.append(len(state["messages"]))
        super().save(chat_id, state, durable)


async def test_no_save_between_a_tool_round_and_its_next_request(tmp_path: Path) -> None:
    call = ToolCall("call_1", "echo", {"x": 1})
    adapter = ScriptedAdapter([ToolCallEvent(call), Finish("tool_calls")], [TextDelta("done")])
    chat, _view = make_chat(adapter)
    store = chat.store = CountingStore(tmp_path / "chats")
    chat.submit("use echo")
    await finish(chat)
    # One write at the end of the turn: the saves the messages asked for were coalesced into
    # it, none of them ran before the request carrying the tool result left.
    assert store.writes == [6]
    assert len(adapter.requests) == 2
    await asyncio.sleep(0.15)  # a deferred save, were one still pending, would land now
    assert store.writes == [6]
    saved = store.load("c1")
    assert saved is not None and [m["role"] for m in saved["messages"]][-2:] == ["tool", "llm"]


async def test_a_message_added_between_turns_is_saved_soon(tmp_path: Path) -> None:
    chat, _view = make_chat(ScriptedAdapter(), tmp_path)
    chat.add(Message(role="user", content="kept"))
    assert chat.store is not None and chat.store.load("c1") is None  # not at once
    await asyncio.sleep(0.15)
    saved = chat.store.load("c1")
    assert saved is not None and saved["messages"][-1]["content"] == "kept"


async def test_a_call_that_is_not_read_only_is_saved_before_it_runs(tmp_path: Path) -> None:
    call = ToolCall("call_1", "write_things", {"note.txt": "x"})
    adapter = ScriptedAdapter([ToolCallEvent(call), Finish("tool_calls")], [TextDelta("done")])
    echo = EchoTool(tmp_path)
    chat, _view = make_chat(adapter, tools=echo)
    store = chat.store = CountingStore(tmp_path / "chats")
    echo.gate.clear()  # the tool is running
    chat.submit("write")
    for _ in range(50):
        await asyncio.sleep(0)
    saved = store.load("c1")
    assert saved is not None and saved["messages"][-1]["tools"]["calls"][0]["id"] == "call_1"
    echo.gate.set()
    await finish(chat)


async def test_an_answer_of_calls_alone_is_not_flushed_and_its_text_tail_is() -> None:
    call = ToolCall("c1", "echo", {})
    adapter = ScriptedAdapter(
        [ToolCallEvent(call), Finish("tool_calls")], [TextDelta("done"), Finish()]
    )
    chat, view = make_chat(adapter)
    flushed = record_flushes(chat, view, view.text)
    assert chat.submit("go")
    await finish(chat)
    # Not flushed when the calls came (none stored yet); flushed when the text came.
    assert [stored for _text, stored in flushed][:1] == [1] and "done" in flushed[0][0], flushed


class WarmingAdapter(ScriptedAdapter):
    """A scripted adapter that can open its next connection ahead (`Warms`): counts the asks."""

    def __init__(self, *scripts: list[Any]) -> None:
        super().__init__(*scripts)
        self.warmed = 0

    def warm(self) -> None:
        self.warmed += 1


async def test_a_tool_round_opens_the_next_connection_once_its_tools_are_under_way() -> None:
    calls = [ToolCall("c1", "echo", {"n": 1}), ToolCall("c2", "echo", {"n": 2})]
    adapter = WarmingAdapter(
        [ToolCallEvent(calls[0]), Finish("tool_calls")],
        [ToolCallEvent(calls[1]), Finish("tool_calls")],
        [TextDelta("done"), Finish()],
    )
    seen: list[int] = []

    async def slow_first(_name: str, args: dict[str, Any]) -> None:
        seen.append(adapter.warmed)  # as the tool starts: nothing opened yet
        if args.get("n") == 1:
            await asyncio.sleep(0.1)  # a command that runs: the opening comes meanwhile
        seen.append(adapter.warmed)

    chat, _view = make_chat(adapter, tools=EchoTool(before=slow_first))
    assert chat.submit("go")
    await finish(chat)
    # The second round was over at once: no connection was opened ahead for it.
    await asyncio.sleep(0.05)
    assert seen == [0, 1, 1, 1] and adapter.warmed == 1
