"""The invariant through a real Chat: random batches of calls (approve, reject, cancel, edit,
timeout, exceptions, unknown tools, invalid JSON, schema violations, output_handler misuse, a
stop mid-batch) leave a history whose next request is valid for OpenAI, Anthropic and Gemini.

tests/tools/test_invariant.py proves every call id gets one result from the tool system; this
suite proves what the providers see afterwards, built by the real adapters' request builders.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.messages import ToolCall
from codecompanion.ports import ApprovalDecision
from tests.support.batches import BUILDERS, PROVIDERS, BatchAdapter, make_chat, settle
from tests.support.tool_calls import build, call_kinds


def batch(
    round_: int, kinds: list[tuple[str, str, str]], stop_at: int | None
) -> tuple[list[ToolCall], dict[str, ApprovalDecision]]:
    calls, answers = build(kinds)
    renamed = [ToolCall(f"r{round_}_{c.id}", c.name, c.arguments, c.raw_arguments) for c in calls]
    if stop_at is not None and stop_at < len(renamed):
        renamed[stop_at] = ToolCall(renamed[stop_at].id, "stopper", {"n": 0, "mode": "ok"})
    return renamed, {f"r{round_}_{key}": value for key, value in answers.items()}


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
