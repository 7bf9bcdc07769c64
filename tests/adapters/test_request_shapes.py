"""Request bodies in each provider's documented shape, including a second turn with results."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.adapters import (
    LS_SCHEMA,
    SECRET,
    WEATHER_SCHEMA,
    AdapterFactory,
    collect,
    conversation,
)

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.adapters.http_adapter import HTTPAdapter
from codecompanion.adapters.mistral import mistral_call_id
from codecompanion.errors import ProviderError
from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.messages import Message, ToolCall

TOOLS = [WEATHER_SCHEMA, LS_SCHEMA]


def adapter(name: str, **options: Any) -> HTTPAdapter:
    settings = AdapterSettings(name=name, url="http://x/v1", api_key="k", model="m", **options)
    return create_adapter(settings)


def body(name: str, **options: Any) -> dict[str, Any]:
    return adapter(name, **options).build_request(conversation(), TOOLS, "m").body


def test_openai_second_turn() -> None:
    # Without the cache key (test_prompt_caching.py checks it).
    request = adapter(
        "openai", parameters={"temperature": 0.2}, extra={"prompt_cache_key": False}
    ).build_request(conversation(), TOOLS, "m")
    assert request.path == "/chat/completions"
    assert request.body == {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.2,
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Weather in London? And list files."},
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {
                        "id": "call_A1",
                        "type": "function",
                        "function": {
                            "name": "weather",
                            "arguments": '{"location": "London", "units": "celsius"}',
                        },
                    },
                    {
                        "id": "call_B2",
                        "type": "function",
                        "function": {"name": "ls", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_A1", "content": "15 degrees"},
            {"role": "tool", "tool_call_id": "call_B2", "content": "ls: permission denied"},
        ],
    }


def test_openai_keeps_malformed_arguments_text_and_skips_stream_options_when_not_streaming() -> (
    None
):
    history = [
        Message(role="user", content="go"),
        Message(role="llm", tool_calls=[ToolCall("c", "ls", {}, raw_arguments="{bad")]),
    ]
    sent = adapter("openai", stream=False).build_request(history, [], "m").body
    assert sent["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{bad"}}
        ],
    }
    assert "stream_options" not in sent and "tools" not in sent


def test_deepseek_sends_reasoning_only_for_the_current_turn() -> None:
    history = [
        Message(role="user", content="one"),
        Message(role="llm", content="old answer", reasoning="old thoughts"),
        *conversation()[1:],
    ]
    messages = adapter("deepseek").build_request(history, TOOLS, "m").body["messages"]
    assert messages[1] == {"role": "assistant", "content": "old answer"}
    assert messages[3]["reasoning_content"] == "Two tools needed."
    assert "reasoning_content" not in body("openai")["messages"][2]


def test_mistral_maps_call_ids_consistently() -> None:
    messages = body("mistral")["messages"]
    call_ids = [c["id"] for c in messages[2]["tool_calls"]]
    result_ids = [m["tool_call_id"] for m in messages[3:]]
    assert call_ids == result_ids
    assert all(len(i) == 9 and i.isalnum() for i in call_ids)
    assert call_ids[0] != call_ids[1]
    assert mistral_call_id("abcDEF123") == "abcDEF123"
    assert "stream_options" not in body("mistral")


def test_azure_deployment_path_version_and_key_header() -> None:
    azure = adapter("azure_openai", extra={"api_version": "2025-01-01"})
    azure.settings.url = "https://res.openai.azure.com"
    request = azure.build_request(conversation(), TOOLS, "my-deploy")
    assert request.path == "/openai/deployments/my-deploy/chat/completions"
    assert request.params == {"api-version": "2025-01-01"}
    assert azure.auth_headers("K") == {"api-key": "K"}
    v1 = adapter("azure_openai").build_request(conversation(), TOOLS, "m")
    assert (v1.path, v1.params) == ("/chat/completions", {})


def test_anthropic_second_turn() -> None:
    # Without cache breakpoints (test_prompt_caching.py checks them).
    request = adapter("anthropic", extra={"cache_breakpoints": 0}).build_request(
        conversation(), TOOLS, "claude"
    )
    assert request.path == "/v1/messages"
    sent = request.body
    assert sent["system"] == [{"type": "text", "text": "You are helpful."}]
    assert sent["max_tokens"] > 0 and sent["stream"] is True
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Weather in London? And list files."}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "call_A1",
                    "name": "weather",
                    "input": {"location": "London", "units": "celsius"},
                },
                {"type": "tool_use", "id": "call_B2", "name": "ls", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_A1",
                    "content": "15 degrees",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_B2",
                    "content": "ls: permission denied",
                    "is_error": True,
                },
            ],
        },
    ]


def test_anthropic_tools_use_input_schema_without_strict() -> None:
    tools = body("anthropic")["tools"]
    weather = tools[0]
    assert [t["name"] for t in tools] == ["weather", "ls"]
    assert weather["description"].startswith("Retrieves")
    assert weather["input_schema"] == {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "strict": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
        },
        "required": ["location", "units"],
    }
    assert "strict" not in weather
    assert WEATHER_SCHEMA["function"]["parameters"]["additionalProperties"] is False


def test_anthropic_sends_thinking_back_before_the_calls_it_led_to() -> None:
    claude = adapter("anthropic")
    parser = claude.new_parser()
    parser.feed(
        b'data: {"type":"message","content":[{"type":"thinking","thinking":"T","signature":"S"},'
        b'{"type":"tool_use","id":"call_A1","name":"weather","input":{}}]}\n\n'
    )
    parser.close()
    claude.after_response(parser)
    assistant = claude.build_request(conversation(), TOOLS, "m").body["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "T", "signature": "S"}
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]


def test_gemini_second_turn() -> None:
    request = adapter("gemini", parameters={"temperature": 0.1}).build_request(
        conversation(), TOOLS, "gemini-x"
    )
    assert (request.path, request.params) == (
        "/models/gemini-x:streamGenerateContent",
        {"alt": "sse"},
    )
    sent = request.body
    assert sent["system_instruction"] == {"parts": [{"text": "You are helpful."}]}
    assert sent["generationConfig"] == {"temperature": 0.1}
    assert sent["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in London? And list files."}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me check."},
                {
                    "functionCall": {
                        "id": "call_A1",
                        "name": "weather",
                        "args": {"location": "London", "units": "celsius"},
                    }
                },
                {"functionCall": {"id": "call_B2", "name": "ls", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_A1",
                        "name": "weather",
                        "response": {"result": "15 degrees"},
                    }
                },
                {
                    "functionResponse": {
                        "id": "call_B2",
                        "name": "ls",
                        "response": {"error": "ls: permission denied"},
                    }
                },
            ],
        },
    ]


def test_gemini_function_declarations_are_stripped_recursively() -> None:
    declarations = body("gemini")["tools"][0]["functionDeclarations"]
    assert declarations[1] == {"name": "ls", "description": "List files."}
    assert declarations[0]["parameters"] == {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "strict": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
        },
        "required": ["location", "units"],
    }


def test_gemini_returns_thought_signatures_and_json_results() -> None:
    gemini = adapter("gemini", stream=False)
    parser = gemini.new_parser()
    parser.feed(
        b'{"candidates":[{"content":{"parts":[{"functionCall":{"id":"call_A1","name":"weather",'
        b'"args":{}},"thoughtSignature":"SIG"}]}}]}'
    )
    parser.close()
    gemini.after_response(parser)
    history = conversation()
    history[4].content = '{"temp": 15}'
    request = gemini.build_request(history, TOOLS, "g")
    parts = request.body["contents"][1]["parts"]
    results = request.body["contents"][2]["parts"]
    assert request.path == "/models/g:generateContent"
    assert parts[1]["thoughtSignature"] == "SIG"
    assert "thoughtSignature" not in parts[2]
    assert results[0]["functionResponse"]["response"] == {"temp": 15}


def test_ollama_second_turn() -> None:
    sent = body("ollama", parameters={"temperature": 0, "num_ctx": 8192, "think": True})
    assert sent["options"] == {"temperature": 0, "num_ctx": 8192}
    assert sent["think"] is True
    assert sent["tools"] == TOOLS
    assert sent["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "function": {
                        "name": "weather",
                        "arguments": {"location": "London", "units": "celsius"},
                    }
                },
                {"function": {"name": "ls", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": "15 degrees", "tool_name": "weather"},
        {"role": "tool", "content": "ls: permission denied", "tool_name": "ls"},
    ]


def test_responses_second_turn() -> None:
    request = adapter("openai_responses").build_request(conversation(), TOOLS, "m")
    assert request.path == "/responses"
    assert request.body["store"] is False
    assert request.body["tools"][1] == {
        "type": "function",
        "name": "ls",
        "description": "List files.",
        "parameters": {"type": "object"},
        "strict": False,
    }
    assert request.body["tools"][0]["strict"] is True
    assert request.body["input"] == [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Weather in London? And list files."},
        {"role": "assistant", "content": "Let me check."},
        {
            "type": "function_call",
            "call_id": "call_A1",
            "name": "weather",
            "arguments": '{"location": "London", "units": "celsius"}',
        },
        {"type": "function_call", "call_id": "call_B2", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_A1", "output": "15 degrees"},
        {"type": "function_call_output", "call_id": "call_B2", "output": "ls: permission denied"},
    ]


async def test_tool_round_trip_over_one_connection(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("call_x", "weather", {"location": "Oslo", "units": "celsius"})]),
        openai_text("It is 3 degrees."),
    )
    gpt = make_adapter("openai", url=provider_server.url + "/v1")
    history = [Message(role="user", content="Weather in Oslo?")]
    first = await collect(gpt, history, TOOLS)
    calls = [e.call for e in first if hasattr(e, "call")]
    history.append(Message(role="llm", tool_calls=calls))
    history.append(Message(role="tool", content="3", tool_call_id="call_x", tool_name="weather"))
    await collect(gpt, history, TOOLS)
    one, two = provider_server.requests
    assert one.path == "/v1/chat/completions"
    assert one.headers["authorization"] == f"Bearer {SECRET}"
    assert two.json()["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_x",
                    "type": "function",
                    "function": {
                        "name": "weather",
                        "arguments": '{"location": "Oslo", "units": "celsius"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_x", "content": "3"},
    ]
    assert two.reused and two.connection == one.connection


async def test_headers_and_key_placement(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.set_default(openai_text("ok"))
    # Only the requests matter here: an OpenAI stream is unreadable to Anthropic and Gemini.
    with pytest.raises(ProviderError, match="Anthropic sent a stream with no readable event"):
        await collect(make_adapter("anthropic", headers={"anthropic-beta": "x"}))
    with pytest.raises(ProviderError, match="Gemini sent a stream with no readable event"):
        await collect(make_adapter("gemini"))
    await collect(make_adapter("azure_openai"))
    anthropic, gemini, azure = provider_server.requests
    assert anthropic.headers["x-api-key"] == SECRET
    assert anthropic.headers["anthropic-version"] == "2023-06-01"
    assert anthropic.headers["anthropic-beta"] == "x"
    assert "authorization" not in anthropic.headers
    assert gemini.headers["x-goog-api-key"] == SECRET
    assert SECRET not in gemini.path + str(gemini.query)
    assert azure.headers["api-key"] == SECRET
