"""Prompt caching with paid providers: Anthropic's cache breakpoints on the stable prefix,
OpenAI's prompt_cache_key, the cached tokens read back, shown in the meter and priced as cached.
Requests go to a scripted server, which keeps what it was sent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.adapters import LS_SCHEMA, WEATHER_SCHEMA, collect, conversation

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Usage
from codecompanion.budget.manager import Budget
from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.messages import Message

TOOLS = [WEATHER_SCHEMA, LS_SCHEMA]


def anthropic_answer(read: int, written: int) -> Turn:
    usage = {"input_tokens": 40, "cache_read_input_tokens": read}
    usage["cache_creation_input_tokens"] = written
    events: list[dict[str, Any] | str] = [
        {"type": "message_start", "message": {"usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]
    return Turn.sse(events)


def marked(body: dict[str, Any]) -> list[str]:
    """Where the body carries cache_control: tools, system, or message N's last block."""
    where = [f"tool {t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    where += ["system" for s in body.get("system", []) if "cache_control" in s]
    for n, message in enumerate(body["messages"]):
        where += [f"message {n}" for block in message["content"] if "cache_control" in block]
    return where


async def test_anthropic_marks_the_stable_prefix_and_reads_the_cached_tokens() -> None:
    with LoopbackServer() as server:
        server.enqueue(anthropic_answer(read=0, written=900), anthropic_answer(900, 60))
        settings = AdapterSettings(name="anthropic", url=server.url, api_key="k", model="claude")
        adapter = create_adapter(settings)
        history = conversation()
        first = await collect(adapter, history, TOOLS)
        later = [
            *history,
            Message(role="llm", content="Done."),
            Message(role="user", content="ok?"),
        ]
        second = await collect(adapter, later, TOOLS)
        await adapter.aclose()
    bodies = [r.json() for r in server.requests]
    # conversation(): user, assistant, user (two results) → messages 0..2; then 3 and 4.
    assert marked(bodies[0]) == ["tool ls", "system", "message 0", "message 2"]
    assert marked(bodies[1]) == ["tool ls", "system", "message 2", "message 4"]
    # The prefix the first request marked is byte for byte the start of the second.
    assert json.dumps(bodies[0]["tools"]) == json.dumps(bodies[1]["tools"])
    assert [u for u in first if isinstance(u, Usage)][-1] == Usage(940, 3, 943, 0, 900)
    assert [u for u in second if isinstance(u, Usage)][-1] == Usage(1000, 3, 1003, 900, 60)


def test_anthropic_breakpoints_can_be_fewer_or_none() -> None:
    def body(count: int) -> dict[str, Any]:
        settings = AdapterSettings(
            name="anthropic", url="http://x", api_key="k", extra={"cache_breakpoints": count}
        )
        return create_adapter(settings).build_request(conversation(), TOOLS, "claude").body

    assert marked(body(2)) == ["tool ls", "system"]
    assert marked(body(0)) == []


def cache_key_of(name: str, messages: list[Message], **extra: Any) -> str | None:
    settings = AdapterSettings(name=name, url="http://x/v1", api_key="k", extra=extra)
    body = create_adapter(settings).build_request(messages, TOOLS, "gpt-4.1").body
    key = body.get("prompt_cache_key")
    return key if isinstance(key, str) else None


def test_openai_sends_one_cache_key_per_stable_prefix() -> None:
    history = conversation()
    key = cache_key_of("openai", history)
    assert key is not None and key.startswith("cc-")
    # Another round of the same chat: the same key; another system prompt: another key.
    assert cache_key_of("openai", [*history, Message(role="user", content="more")]) == key
    other = [Message(role="system", content="Be brief."), *history[1:]]
    assert cache_key_of("openai", other) not in (None, key)
    # Compatible servers get no field they may refuse, unless the user asks for it.
    assert cache_key_of("openai_compatible", history) is None
    assert cache_key_of("openai_compatible", history, prompt_cache_key=True) == key


@pytest.mark.parametrize(
    ("model", "usage", "cost"),
    [
        # claude-sonnet-4: $3 in, $15 out; cache reads at a tenth, writes at 1.25x.
        (
            "claude-sonnet-4",
            Usage(1000, 10, 1010, 800, 100),
            (100 * 3 + 800 * 0.3 + 100 * 3.75 + 10 * 15),
        ),
        # gpt-4.1: $2 in, $8 out; cached input at a quarter.
        ("gpt-4.1", Usage(1000, 10, 1010, 600), (400 * 2 + 600 * 0.5 + 10 * 8)),
        # A user price without a cached rate: cached input at the full price.
        ("mine", Usage(1000, 10, 1010, 600), (1000 * 1 + 10 * 1)),
    ],
)
def test_cached_tokens_are_priced_as_cached_and_shown(
    model: str, usage: Usage, cost: float
) -> None:
    extra = {"price": {"input": 1, "output": 1}} if model == "mine" else {}
    settings = AdapterSettings(name="openai", url="http://x", api_key="k", model=model, extra=extra)
    adapter = create_adapter(settings)
    budget = Budget()
    budget.observe(usage, adapter)
    meter = budget.meter(adapter, [], [])
    assert meter.cost == pytest.approx(cost / 1_000_000)
    assert f"in ({usage.cached_tokens} cached)" in meter.text()
    assert meter.to_dict()["last_cached"] == usage.cached_tokens


def test_a_user_price_may_set_the_cached_rates() -> None:
    price = {"input": 2, "output": 4, "cached_input": 0.2, "cache_write": 2.5}
    settings = AdapterSettings(
        name="anthropic", url="http://x", api_key="k", model="x", extra={"price": price}
    )
    budget = Budget()
    budget.observe(Usage(1000, 0, 1000, 500, 100), create_adapter(settings))
    assert budget.cost == pytest.approx((400 * 2 + 500 * 0.2 + 100 * 2.5) / 1_000_000)
