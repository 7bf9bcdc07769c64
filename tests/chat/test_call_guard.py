"""The turn's call guard, through the real chat, tool system and OpenAI-compatible adapter,
against a scripted server: the same call a third time is not run (the model is told, the user
sees it), a fourth ends the turn; a malformed call gets the parser's error once, a second
malformed round ends the turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from tests.support.chat import LookupTool, RecordingView, chat_requests, loopback_turn


@pytest.fixture
def lookup() -> LookupTool:
    return LookupTool()


def call(n: int, args: dict[str, Any] | str) -> Turn:
    """One answer with one lookup call (`args` as text is sent as it is)."""
    turn = openai_tool_calls([(f"call_{n}", "lookup", args if isinstance(args, dict) else {})])
    if isinstance(args, str):
        raw = json.dumps(args)[1:-1]
        turn.body_chunks = [c.replace(b'"{}"', f'"{raw}"'.encode()) for c in turn.body_chunks]
    return turn


async def run_turn(
    server: LoopbackServer, cwd: Path, lookup: LookupTool
) -> tuple[Chat, RecordingView]:
    return await loopback_turn(server, cwd, lookup, "@{lookup} find it")


def results(chat: Chat) -> list[str]:
    return [m.content or "" for m in chat.messages if m.role == "tool"]


async def test_a_third_identical_call_is_not_run_and_the_model_is_told(
    provider_server: LoopbackServer, tmp_path: Path, lookup: LookupTool
) -> None:
    provider_server.enqueue(*(call(i, {"key": "a"}) for i in range(3)), openai_text("a is 1"))
    chat, view = await run_turn(provider_server, tmp_path, lookup)
    assert lookup.asked == ["a", "a"]
    told = results(chat)[2]
    assert told.startswith("Not run: this is the third identical call to lookup")
    # The model read that result: it went out with the fourth request.
    last = chat_requests(provider_server)[3]["messages"][-1]
    assert last["role"] == "tool" and last["content"] == told
    assert any("third time: not run" in text for text, _ in view.notices)
    assert chat.messages.pending_calls() == []


async def test_a_fourth_identical_call_ends_the_turn(
    provider_server: LoopbackServer, tmp_path: Path, lookup: LookupTool
) -> None:
    provider_server.enqueue(*(call(i, {"key": "a"}) for i in range(4)), openai_text("never asked"))
    chat, view = await run_turn(provider_server, tmp_path, lookup)
    assert len(chat_requests(provider_server)) == 4 and lookup.asked == ["a", "a"]
    assert results(chat)[-1] == "Not run: the turn was stopped."
    assert any("same lookup call 4 times: stopped" in text for text, _ in view.notices)
    assert chat.messages.pending_calls() == []


async def test_a_malformed_call_gets_the_parser_error_once_then_the_turn_stops(
    provider_server: LoopbackServer, tmp_path: Path, lookup: LookupTool
) -> None:
    provider_server.enqueue(call(1, {}), call(2, {"wrong": 1}), openai_text("never asked"))
    chat, view = await run_turn(provider_server, tmp_path, lookup)
    assert len(chat_requests(provider_server)) == 2 and lookup.asked == []
    first, second = results(chat)
    assert "do not match its schema" in first  # the parser's own error, sent back once
    assert second == "Not run: the turn was stopped."
    assert any("could not be read again" in text for text, _ in view.notices)


async def test_a_model_that_corrects_its_call_goes_on(
    provider_server: LoopbackServer, tmp_path: Path, lookup: LookupTool
) -> None:
    provider_server.enqueue(call(1, "{key: "), call(2, {"key": "b"}), openai_text("b is 2"))
    chat, view = await run_turn(provider_server, tmp_path, lookup)
    assert len(chat_requests(provider_server)) == 3 and lookup.asked == ["b"]
    assert results(chat)[1] == "value of b"
    assert view.notices == []
