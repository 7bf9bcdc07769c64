"""Each provider's `usage` shape, from recorded bodies, reaches the meter as input and output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Usage
from codecompanion.budget.manager import Budget

WIRE = Path(__file__).resolve().parents[1] / "data" / "wire"


def usage_of(adapter: str, body: bytes) -> Usage | None:
    parser = create_adapter(AdapterSettings(name=adapter, url="http://x", api_key="k")).new_parser()
    events: list[Event] = parser.feed(body) + parser.close()
    assert parser.error is None
    found = [e for e in events if isinstance(e, Usage)]
    return found[-1] if found else None


@pytest.mark.parametrize(
    ("adapter", "capture", "expected"),
    [
        ("openai", "openai_tools_streaming.txt", Usage(479, 53, 532, 0)),
        ("openai", "openai_tools_no_streaming.txt", Usage(461, 58, 519, 0)),
        ("anthropic", "anthropic_tools_streaming.txt", Usage(905, 137, 1042, 0, 0)),
        ("anthropic", "anthropic_tools_no_streaming.txt", Usage(916, 144, 1060, 0, 0)),
        ("gemini", "gemini_tools_streaming.txt", Usage(504, 38, 542)),
        ("ollama", "ollama_tools_streaming.txt", Usage(577, 90, 667)),
    ],
)
def test_recorded_usage_reaches_the_meter(adapter: str, capture: str, expected: Usage) -> None:
    usage = usage_of(adapter, (WIRE / capture).read_bytes())
    assert usage == expected
    budget = Budget()
    chat_adapter = create_adapter(AdapterSettings(name=adapter, url="http://x", api_key="k"))
    budget.observe(usage, chat_adapter)
    meter = budget.meter(chat_adapter, [], [])
    assert (meter.last_input, meter.last_output) == (
        expected.prompt_tokens,
        expected.completion_tokens,
    )


def sse(*objects: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in objects)


def test_anthropic_cached_input_counts_in_the_window() -> None:
    body = sse(
        {
            "type": "message_start",
            "message": {
                "usage": {
                    "input_tokens": 10,
                    "cache_creation_input_tokens": 200,
                    "cache_read_input_tokens": 3000,
                }
            },
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 7},
        },
        {"type": "message_stop"},
    )
    assert usage_of("anthropic", body) == Usage(
        3210, 7, 3217, cached_tokens=3000, cache_write_tokens=200
    )


def test_openai_responses_usage() -> None:
    body = sse(
        {
            "type": "response.completed",
            "response": {
                "status": "completed",
                "output": [],
                "usage": {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150},
            },
        }
    )
    assert usage_of("openai_responses", body) == Usage(120, 30, 150)


def test_a_provider_without_usage_leaves_the_estimate() -> None:
    body = sse({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]})
    assert usage_of("mistral", body) is None
    budget = Budget()
    adapter = create_adapter(AdapterSettings(name="mistral", url="http://x", api_key="k"))
    budget.sending([], [])
    budget.observe(None, adapter)
    assert budget.meter(adapter, [], []).last_input == budget.ledger.last_estimate
