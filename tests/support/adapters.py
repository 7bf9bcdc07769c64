"""Shared values for adapter tests: the sample history, schemas, and an event collector."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from codecompanion.adapters.base import Event, ReasoningDelta, TextDelta
from codecompanion.adapters.http_adapter import HTTPAdapter
from codecompanion.messages import Message, ToolCall

SECRET = "sk-test-SECRET-1234567890"
WIRE = Path(__file__).resolve().parents[1] / "data" / "wire"
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Retrieves current weather for the given location.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City and country"},
                "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "strict": {
                    "type": "object",
                    "properties": {"deep": {"type": "boolean"}},
                    "additionalProperties": False,
                },
            },
            "required": ["location", "units"],
            "additionalProperties": False,
            "$schema": "http://json-schema.org/draft-07/schema#",
        },
        "strict": True,
    },
}
LS_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {"name": "ls", "description": "List files.", "parameters": {"type": "object"}},
}

AdapterFactory = Callable[..., HTTPAdapter]


async def collect(
    adapter: HTTPAdapter,
    messages: Sequence[Message] = (),
    tools: Sequence[dict[str, Any]] = (),
    into: list[Event] | None = None,
) -> list[Event]:
    """Every event of one request (appended to `into` as they arrive, when given)."""
    events = [] if into is None else into
    history = list(messages) or [Message(role="user", content="hi")]
    async for event in adapter.stream(history, tools):
        events.append(event)
    return events


def runs_joined(events: Sequence[Event]) -> list[Event]:
    """`events` with each run of consecutive text (or reasoning) deltas as one delta: how the
    parser groups a stream's deltas follows how its bytes arrived, which the network decides."""
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, (TextDelta, ReasoningDelta)) and type(last) is type(event):
            out[-1] = type(event)(last.text + event.text)  # type: ignore[union-attr]
        else:
            out.append(event)
    return out


def conversation() -> list[Message]:
    """A full second turn: system prompt, question, answer text, two calls, their results."""
    calls = [
        ToolCall("call_A1", "weather", {"location": "London", "units": "celsius"}),
        ToolCall("call_B2", "ls", {}, raw_arguments=None),
    ]
    return [
        Message(role="system", content="You are helpful.", visible=False, tag="system_prompt"),
        Message(role="user", content="Weather in London? And list files."),
        Message(role="llm", content="Let me check.", reasoning="Two tools needed."),
        Message(role="llm", content=None, visible=False, tool_calls=calls),
        Message(role="tool", content="15 degrees", tool_call_id="call_A1", tool_name="weather"),
        Message(
            role="tool",
            content="ls: permission denied",
            tool_call_id="call_B2",
            tool_name="ls",
            is_error=True,
        ),
    ]
