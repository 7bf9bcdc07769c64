"""An empty answer to tool results, through the real chat, tool system and OpenAI-compatible
adapter against a scripted server: the model is asked once to go on or answer the user, and the
turn ends only when it answers nothing again (small models sometimes stop a round that way)."""

from __future__ import annotations

from pathlib import Path

from codecompanion.chat.chat import Chat
from codecompanion.chat.model_loop import ANSWER_NOW, NUDGE, NUDGE_REQUEST_CHARS, nudge
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.messages import Message
from tests.support.chat import LookupTool, RecordingView, chat_requests, loopback_turn

LINE = "_[the model answered nothing: asked to go on]_"
AGAIN = "_[the model answered nothing again: asked to answer]_"


def call(n: int, key: str) -> Turn:
    return openai_tool_calls([(f"call_{n}", "lookup", {"key": key})])


async def run_turn(server: LoopbackServer, cwd: Path) -> tuple[Chat, RecordingView]:
    return await loopback_turn(server, cwd, LookupTool(), "@{lookup} find a and b")


async def test_an_empty_answer_to_results_is_nudged_and_the_task_goes_on(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    provider_server.enqueue(
        call(0, "a"), openai_text(""), call(1, "b"), openai_text("a and b found")
    )
    chat, view = await run_turn(provider_server, tmp_path)
    requests = chat_requests(provider_server)
    assert len(requests) == 4
    # The third request carries the nudge right after the first result; the model went on.
    third = requests[2]["messages"]
    assert third[-2]["role"] == "tool" and third[-2]["content"] == "value of a"
    # The nudge repeats the user's request: a small model that stopped has often lost it.
    assert third[-1]["role"] == "user" and third[-1]["content"].startswith(NUDGE)
    assert third[-1]["content"].endswith("find a and b")
    assert [m.content for m in chat.messages if m.role == "tool"] == ["value of a", "value of b"]
    last = chat.messages[len(chat.messages) - 1]
    assert last.role == "llm" and last.content == "a and b found"
    assert view.text().count(LINE) == 1
    nudge = next(m for m in chat.messages if (m.content or "").startswith(NUDGE))
    assert not nudge.visible  # the user's transcript shows the one line, not the message


async def test_a_second_empty_answer_is_asked_for_the_answer_and_a_third_ends_the_turn(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    provider_server.enqueue(call(0, "a"), openai_text(""), openai_text(" \n"), openai_text(""))
    chat, view = await run_turn(provider_server, tmp_path)
    requests = chat_requests(provider_server)
    assert len(requests) == 4  # a nudge, then a request for the answer, then the turn is over
    assert requests[3]["messages"][-1] == {"role": "user", "content": ANSWER_NOW}
    assert view.text().count(LINE) == 1 and view.text().count(AGAIN) == 1
    assert sum(1 for m in chat.messages if (m.content or "").startswith(NUDGE)) == 1
    assert chat.messages.pending_calls() == []


async def test_the_answer_asked_for_ends_the_turn(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    provider_server.enqueue(call(0, "a"), openai_text(""), openai_text(""), openai_text("a is 1"))
    chat, view = await run_turn(provider_server, tmp_path)
    assert len(chat_requests(provider_server)) == 4
    last = chat.messages[len(chat.messages) - 1]
    assert last.role == "llm" and last.content == "a is 1"


async def test_an_empty_answer_to_the_users_message_is_not_nudged(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    provider_server.enqueue(openai_text(""))
    chat, view = await run_turn(provider_server, tmp_path)
    assert len(chat_requests(provider_server)) == 1
    assert LINE not in view.text()
    assert not any((m.content or "").startswith(NUDGE) for m in chat.messages)


async def test_each_round_of_results_gets_its_own_nudge(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    provider_server.enqueue(
        call(0, "a"), openai_text(""), call(1, "b"), openai_text(""), openai_text("both found")
    )
    chat, view = await run_turn(provider_server, tmp_path)
    assert len(chat_requests(provider_server)) == 5
    assert view.text().count(LINE) == 2
    last = chat.messages[len(chat.messages) - 1]
    assert last.content == "both found"


def test_the_nudge_repeats_the_last_request_cut_to_its_limit() -> None:
    long = "x" * (NUDGE_REQUEST_CHARS + 50)
    messages = [
        Message(role="user", content="first request"),
        Message(role="user", content=long),
        Message(role="user", content="hidden context", visible=False),
    ]
    said = nudge(messages)
    assert said.startswith(NUDGE) and "first request" not in said and "hidden" not in said
    assert said.endswith("x" * NUDGE_REQUEST_CHARS + " …")
    assert nudge([]) == NUDGE
