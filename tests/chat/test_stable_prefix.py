"""A chat's requests only ever grow at the end within a turn: the server's prompt cache holds.

Through the real chat, tool system and OpenAI-compatible adapter against a scripted server:
three tool rounds, and each request's tools and messages are the previous request's, byte for
byte, with the new messages after them (llama.cpp then evaluates only the new tokens).
"""

from __future__ import annotations

import json
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from tests.support.chat import LookupTool, chat_requests, loopback_turn


def letters(word: str) -> str:
    return f"{word} has {len(word)} letters"


async def test_each_request_starts_with_the_one_before(
    provider_server: LoopbackServer, tmp_path: Path
) -> None:
    words = ["alpha", "beta", "gamma"]
    provider_server.enqueue(
        *(openai_tool_calls([(f"c{i}", "count", {"word": w})]) for i, w in enumerate(words))
    )
    provider_server.enqueue(openai_text("Done: 5, 4, 5."))
    count = LookupTool("count", "word", "Count a word's letters", letters)
    await loopback_turn(provider_server, tmp_path, count, "@{count} count alpha, beta and gamma")
    assert count.asked == words
    bodies = chat_requests(provider_server)
    assert len(bodies) == 4
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert json.dumps(after["tools"]) == json.dumps(before["tools"])
        sent = [json.dumps(m) for m in before["messages"]]
        now = [json.dumps(m) for m in after["messages"]]
        assert now[: len(sent)] == sent, "an earlier message changed between rounds"
        assert len(now) == len(sent) + 2  # the answer's calls and their result
