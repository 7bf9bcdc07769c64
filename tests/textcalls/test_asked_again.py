"""A call an answer wrote but that could not run is asked for again (`constrained_calls =
True`), its answer held to the offered tools' call schema: the real chat, tool system and
adapters (OpenAI-compatible, Ollama) against a scripted server. The request shapes: the same
messages and tools, no new user message, plus `response_format` (Ollama: `format`) holding one
call; a refusal falls back to the first answer and is not tried again in the chat; at most one
re-send per round; answers that make a call, or write none, are never sent again; off unless
turned on, and never for paid providers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.textcalls.again import call_schema, constrains
from codecompanion.textcalls.mode import setting_problem
from codecompanion.tools import tool_registry
from tests.support.builder import built_chat
from tests.support.chat import RecordingView

LOOKUPS: list[str] = []
PARAMETERS = {
    "type": "object",
    "properties": {"key": {"type": "string"}},
    "required": ["key"],
    "additionalProperties": False,
}
LINE = "asked again for it as a call"


def lookup(self: Any, args: dict[str, Any], *_: Any) -> dict[str, Any]:
    LOOKUPS.append(args["key"])
    return {"status": "success", "data": f"value of {args['key']}"}


LOOKUP = {
    "name": "lookup",
    "cmds": [lookup],
    "schema": {
        "type": "function",
        "function": {"name": "lookup", "description": "Look a key up", "parameters": PARAMETERS},
    },
    "output": {
        "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(self, stdout[0]),
    },
}
# How a small model answers: the call as a JSON block, then prose (so it reads as an example).
QUOTED = (
    "You can use the lookup function:\n\n```json\n"
    '{"name": "lookup", "arguments": {"key": "a"}}\n```\n\nThis returns the value of a.'
)
CALL = '{"name": "lookup", "arguments": {"key": "a"}}'
SCHEMA = {
    "type": "object",
    "properties": {"name": {"const": "lookup"}, "arguments": PARAMETERS},
    "required": ["name", "arguments"],
}


ADAPTERS: list[Any] = []


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    LOOKUPS.clear()
    with LoopbackServer() as started:
        yield started
        while ADAPTERS:
            await ADAPTERS.pop().aclose()


def make_chat(
    server: LoopbackServer, tmp_path: Path, name: str = "openai_compatible", **extra: Any
) -> tuple[Chat, RecordingView]:
    url = server.url + ("/v1" if name != "ollama" else "")
    on = {"ask_recovered_calls": False, "constrained_calls": True}
    settings = AdapterSettings(name=name, url=url, model="m", api_key="sk-test", extra=on)
    settings.extra.update(extra)
    if settings.extra["constrained_calls"] is None:
        del settings.extra["constrained_calls"]  # as a config without the setting
    adapter = create_adapter(settings)
    ADAPTERS.append(adapter)
    registry = tool_registry({"lookup": LOOKUP}, {}, tool_opts={})
    view = RecordingView()
    chat = built_chat(
        adapter, registry, tmp_path, view, chat_id="g", opts={"timeout": 5}, yolo=True
    )
    return chat, view


async def turn(chat: Chat, text: str = "@{lookup} what is a?") -> None:
    assert chat.submit(text)
    assert chat._task is not None
    await asyncio.wait_for(asyncio.shield(chat._task), 20)


def posted(server: LoopbackServer) -> list[dict[str, Any]]:
    """The chat requests (Ollama's /api/show asks aside)."""
    return [r.json() for r in server.requests if r.method == "POST" and r.path != "/api/show"]


def without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


def ollama(text: str) -> Turn:
    return Turn.ndjson([{"message": {"role": "assistant", "content": text}}, {"done": True}])


async def test_a_call_quoted_in_prose_is_asked_again_under_the_call_schema(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.enqueue(openai_text(QUOTED), openai_text(CALL), openai_text("a is 1"))
    chat, view = make_chat(server, tmp_path)
    await turn(chat)
    assert LOOKUPS == ["a"]
    first, again, after = posted(server)
    # The same request (messages and tools as sent, no user message added), held to one call.
    assert without(again, "response_format") == first
    assert "response_format" not in first
    assert again["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "tool_call", "schema": SCHEMA},
    }
    assert [m["role"] for m in again["messages"]].count("user") == 1
    # The next request goes on from the first one's prefix: the answer's text and its call.
    assert after["messages"][: len(first["messages"])] == first["messages"]
    answer, result = after["messages"][len(first["messages"]) :]
    assert answer["content"] == QUOTED
    assert [c["function"]["name"] for c in answer["tool_calls"]] == ["lookup"]
    assert result == {
        "role": "tool",
        "tool_call_id": answer["tool_calls"][0]["id"],
        "content": "value of a",
    }
    assert LINE in view.text() and view.notices == []
    assert chat.messages.pending_calls() == []


async def test_a_call_with_arguments_against_the_schema_is_asked_again(
    server: LoopbackServer, tmp_path: Path
) -> None:
    wrong = '```json\n{"name": "lookup", "arguments": {"id": "a"}}\n```'
    server.enqueue(openai_text(wrong), openai_text(CALL), openai_text("a is 1"))
    chat, _view = make_chat(server, tmp_path)
    await turn(chat)
    assert len(posted(server)) == 3 and LOOKUPS == ["a"]
    assert "response_format" in posted(server)[1]


async def test_a_refusal_keeps_the_first_answer_and_is_not_tried_again_in_the_chat(
    server: LoopbackServer, tmp_path: Path
) -> None:
    refused = Turn.error(400, "Cannot use custom grammar constraints with tools.")
    server.enqueue(openai_text(QUOTED), refused, openai_text(QUOTED))
    chat, view = make_chat(server, tmp_path)
    await turn(chat)
    assert len(posted(server)) == 2 and LOOKUPS == []
    answers = [m.content for m in chat.messages if m.role == "llm"]
    assert answers == [QUOTED]  # the answer stands, as without the re-send
    assert view.notices == [] and LINE not in view.text()
    await turn(chat, "and again?")
    assert len(posted(server)) == 3  # the second turn's answer: not sent again
    assert chat.messages.pending_calls() == []


async def test_at_most_one_re_send_per_round(server: LoopbackServer, tmp_path: Path) -> None:
    server.enqueue(openai_text(QUOTED), openai_text(QUOTED), openai_text("never asked"))
    chat, view = make_chat(server, tmp_path)
    await turn(chat)
    assert len(posted(server)) == 2 and LOOKUPS == []
    assert [m.content for m in chat.messages if m.role == "llm"] == [QUOTED]
    assert LINE not in view.text()


@pytest.mark.parametrize(
    "answer",
    [
        "a is 1",
        'The data:\n```json\n{"name": "Ada", "age": 3}\n```\nThat is all.',
        "```python\nlookup(key='a')\n```\nThat would do it.",
    ],
)
async def test_an_answer_without_a_call_is_never_sent_again(
    server: LoopbackServer, tmp_path: Path, answer: str
) -> None:
    server.enqueue(openai_text(answer), openai_text("never asked"))
    chat, _view = make_chat(server, tmp_path)
    await turn(chat)
    assert len(posted(server)) == 1 and LOOKUPS == []


async def test_calls_that_run_are_never_sent_again(server: LoopbackServer, tmp_path: Path) -> None:
    recovered = f"```json\n{CALL}\n```"  # a call at the end of the answer: it runs as it is
    native = openai_tool_calls([("call_1", "lookup", {"key": "b"})])
    server.enqueue(openai_text(recovered), native, openai_text("done"))
    chat, _view = make_chat(server, tmp_path)
    await turn(chat)
    assert LOOKUPS == ["a", "b"] and len(posted(server)) == 3
    assert not any("response_format" in body for body in posted(server))


async def test_a_block_copied_from_a_result_is_not_asked_again(
    server: LoopbackServer, tmp_path: Path
) -> None:
    native = openai_tool_calls([("call_1", "lookup", {"key": CALL})])  # its result holds CALL
    quoting = f"The value says:\n```json\n{CALL}\n```\nso that is how."
    server.enqueue(native, openai_text(quoting), openai_text("never asked"))
    chat, _view = make_chat(server, tmp_path)
    await turn(chat)
    assert len(posted(server)) == 2 and LOOKUPS == [CALL]


@pytest.mark.parametrize("setting", [False, None])
async def test_off_unless_the_setting_turns_it_on(
    server: LoopbackServer, tmp_path: Path, setting: bool | None
) -> None:
    server.enqueue(openai_text(QUOTED), openai_text("never asked"))
    chat, _view = make_chat(server, tmp_path, constrained_calls=setting)
    await turn(chat)
    assert len(posted(server)) == 1


async def test_prompt_mode_asks_again_with_no_tools_and_the_same_messages(
    server: LoopbackServer, tmp_path: Path
) -> None:
    broken = '```json\n{"name": "lookup", "arguments": "key is a"}\n```'  # does not read
    server.enqueue(openai_text(broken), openai_text(CALL), openai_text("a is 1"))
    chat, _view = make_chat(server, tmp_path, tool_calls="prompt")
    await turn(chat)
    first, again, _after = posted(server)
    assert "tools" not in first and without(again, "response_format") == first
    assert again["response_format"]["json_schema"]["schema"] == SCHEMA
    assert LOOKUPS == ["a"]


async def test_ollama_asks_again_with_format(server: LoopbackServer, tmp_path: Path) -> None:
    server.enqueue(ollama(QUOTED), ollama(CALL), ollama("a is 1"))
    chat, _view = make_chat(server, tmp_path, name="ollama", tool_calls="native")
    await turn(chat)
    first, again, _after = posted(server)
    assert without(again, "format") == first and again["format"] == SCHEMA
    assert LOOKUPS == ["a"]


def test_which_adapters_ask_again() -> None:
    def adapter(name: str, **extra: Any) -> Any:
        settings = AdapterSettings(name=name, url="http://127.0.0.1:9", api_key="k", extra=extra)
        return create_adapter(settings)

    on = {"constrained_calls": True}
    assert constrains(adapter("openai_compatible", **on)) and constrains(adapter("ollama", **on))
    assert not constrains(adapter("openai_compatible")) and not constrains(adapter("ollama"))
    assert not constrains(adapter("openai_compatible", constrained_calls=False))
    # Paid providers are never sent a schema they may bill or refuse, even when asked to.
    for name in ("openai", "anthropic", "gemini", "mistral", "deepseek", "openrouter", "xai"):
        assert not constrains(adapter(name, **on)), name


def test_the_call_schema_of_several_tools_is_one_of_their_calls() -> None:
    other = {"type": "function", "function": {"name": "ping"}}
    schema = call_schema([LOOKUP["schema"], other])
    assert schema["anyOf"][0] == SCHEMA
    assert schema["anyOf"][1]["properties"] == {
        "name": {"const": "ping"},
        "arguments": {"type": "object"},
    }
    assert json.loads(json.dumps(schema)) == schema


def test_the_setting_is_checked() -> None:
    assert setting_problem("x", {"constrained_calls": True}) is None
    problem = setting_problem("x", {"constrained_calls": "no"})
    assert problem is not None and "constrained_calls" in problem
