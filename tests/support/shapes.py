"""Checks that a provider request body pairs every tool call with exactly one result."""

from __future__ import annotations

from collections import Counter
from typing import Any


def check_openai(messages: list[dict[str, Any]]) -> None:
    """Chat Completions: tool messages directly follow the assistant message that made the calls."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message["role"] != "tool", f"tool message {index} follows no tool calls"
        calls = message.get("tool_calls") or []
        index += 1
        if message["role"] != "assistant" or not calls:
            continue
        ids = [call["id"] for call in calls]
        assert all(isinstance(call["function"]["arguments"], str) for call in calls)
        answered: list[str] = []
        while index < len(messages) and messages[index]["role"] == "tool":
            assert isinstance(messages[index]["content"], str)
            answered.append(messages[index]["tool_call_id"])
            index += 1
        assert Counter(answered) == Counter(ids), (ids, answered)
        assert len(set(ids)) == len(ids), ids


def check_anthropic(messages: list[dict[str, Any]]) -> None:
    """Messages API: alternating roles; tool_result blocks lead the next user message."""
    assert messages and messages[0]["role"] == "user", messages[:1]
    for previous, current in zip(messages, messages[1:], strict=False):
        assert previous["role"] != current["role"], "roles must alternate"
    for index, message in enumerate(messages):
        blocks = message["content"]
        assert blocks, f"message {index} is empty"
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if message["role"] == "user" and results:
            before = messages[index - 1] if index else {"content": []}
            asked = [b["id"] for b in before["content"] if b.get("type") == "tool_use"]
            assert Counter(b["tool_use_id"] for b in results) == Counter(asked), (asked, results)
            assert all(b.get("type") == "tool_result" for b in blocks[: len(results)])
        if uses:
            assert index + 1 < len(messages), "tool_use without a following user message"
            following = messages[index + 1]["content"]
            got = [b["tool_use_id"] for b in following if b.get("type") == "tool_result"]
            assert Counter(got) == Counter(uses), (uses, got)


def check_gemini(contents: list[dict[str, Any]]) -> None:
    """Gemini: a model turn's functionCall parts are answered by the next user turn, one each."""
    for previous, current in zip(contents, contents[1:], strict=False):
        assert previous["role"] != current["role"], "roles must alternate"
    for index, content in enumerate(contents):
        parts = content["parts"]
        assert parts, f"content {index} is empty"
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if responses:
            assert content["role"] == "user" and index > 0
            earlier = contents[index - 1]["parts"]
            before = [p["functionCall"] for p in earlier if "functionCall" in p]
            assert len(responses) == len(before), (before, responses)
            assert Counter(r["id"] for r in responses) == Counter(c["id"] for c in before)
            assert Counter(r["name"] for r in responses) == Counter(c["name"] for c in before)
        if calls:
            assert content["role"] == "model"
            assert index + 1 < len(contents), "functionCall without a following functionResponse"
            after = [p for p in contents[index + 1]["parts"] if "functionResponse" in p]
            assert len(after) == len(calls), (calls, after)


def check_saved_messages(messages: list[dict[str, Any]]) -> None:
    """A saved chat (CodeCompanion's shape): every call has one result and no result is a stray."""
    calls = [c["id"] for m in messages for c in (m.get("tools") or {}).get("calls", [])]
    results = [m["tools"]["call_id"] for m in messages if m["role"] == "tool" and m.get("tools")]
    assert Counter(results) == Counter(calls), (calls, results)
