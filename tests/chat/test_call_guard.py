"""The turn's call guard, through the real chat, tool system and OpenAI-compatible adapter,
against a scripted server: the same call a third time is not run (the model is told, the user
sees it), a fourth ends the turn; a malformed call gets the parser's error once, a second
malformed round ends the turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.builder import built_tool_system
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover

LOOKUPS: list[str] = []


def lookup(self: Any, args: dict[str, Any], *_: Any) -> dict[str, Any]:
    LOOKUPS.append(args["key"])
    return {"status": "success", "data": f"value of {args['key']}"}


LOOKUP = {
    "name": "lookup",
    "cmds": [lookup],
    "schema": {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a key up",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
                "additionalProperties": False,
            },
        },
    },
    "output": {
        "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(self, stdout[0]),
    },
}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    LOOKUPS.clear()
    with LoopbackServer() as started:
        yield started


def call(n: int, args: dict[str, Any] | str) -> Turn:
    """One answer with one lookup call (`args` as text is sent as it is)."""
    turn = openai_tool_calls([(f"call_{n}", "lookup", args if isinstance(args, dict) else {})])
    if isinstance(args, str):
        raw = json.dumps(args)[1:-1]
        turn.body_chunks = [c.replace(b'"{}"', f'"{raw}"'.encode()) for c in turn.body_chunks]
    return turn


async def run_turn(server: LoopbackServer, tmp_path: Path) -> tuple[Chat, RecordingView]:
    adapter = create_adapter(
        AdapterSettings(name="openai_compatible", url=server.url + "/v1", model="m")
    )
    registry = tool_registry({"lookup": LOOKUP}, {}, tool_opts={})
    view = RecordingView()

    def tools(chat: Chat) -> ToolSystem:
        return built_tool_system(
            chat=chat,
            registry=registry,
            approver=ScriptedApprover(),
            events=RecordingEvents(),
            cwd=tmp_path,
            opts={"timeout": 5},
            yolo=True,
        )

    chat = Chat(chat_id="g", adapter=adapter, view=view, tool_factory=tools)
    assert chat.submit("@{lookup} find it")
    assert chat._task is not None
    await asyncio.wait_for(asyncio.shield(chat._task), 20)
    await adapter.aclose()
    return chat, view


def results(chat: Chat) -> list[str]:
    return [m.content or "" for m in chat.messages if m.role == "tool"]


def posted(server: LoopbackServer) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests if r.method == "POST"]


async def test_a_third_identical_call_is_not_run_and_the_model_is_told(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.enqueue(*(call(i, {"key": "a"}) for i in range(3)), openai_text("a is 1"))
    chat, view = await run_turn(server, tmp_path)
    assert LOOKUPS == ["a", "a"]
    told = results(chat)[2]
    assert told.startswith("Not run: this is the third identical call to lookup")
    # The model read that result: it went out with the fourth request.
    last = posted(server)[3]["messages"][-1]
    assert last["role"] == "tool" and last["content"] == told
    assert any("third time: not run" in text for text, _ in view.notices)
    assert chat.messages.pending_calls() == []


async def test_a_fourth_identical_call_ends_the_turn(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.enqueue(*(call(i, {"key": "a"}) for i in range(4)), openai_text("never asked"))
    chat, view = await run_turn(server, tmp_path)
    assert len(posted(server)) == 4 and LOOKUPS == ["a", "a"]
    assert results(chat)[-1] == "Not run: the turn was stopped."
    assert any("same lookup call 4 times: stopped" in text for text, _ in view.notices)
    assert chat.messages.pending_calls() == []


async def test_a_malformed_call_gets_the_parser_error_once_then_the_turn_stops(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.enqueue(call(1, {}), call(2, {"wrong": 1}), openai_text("never asked"))
    chat, view = await run_turn(server, tmp_path)
    assert len(posted(server)) == 2 and LOOKUPS == []
    first, second = results(chat)
    assert "do not match its schema" in first  # the parser's own error, sent back once
    assert second == "Not run: the turn was stopped."
    assert any("could not be read again" in text for text, _ in view.notices)


async def test_a_model_that_corrects_its_call_goes_on(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.enqueue(call(1, "{key: "), call(2, {"key": "b"}), openai_text("b is 2"))
    chat, view = await run_turn(server, tmp_path)
    assert len(posted(server)) == 3 and LOOKUPS == ["b"]
    assert results(chat)[1] == "value of b"
    assert view.notices == []
