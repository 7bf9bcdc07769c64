"""A chat's requests only ever grow at the end within a turn: the server's prompt cache holds.

Through the real chat, tool system and OpenAI-compatible adapter against a scripted server:
three tool rounds, and each request's tools and messages are the previous request's, byte for
byte, with the new messages after them (llama.cpp then evaluates only the new tokens).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.builder import built_tool_system
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover


def count(self: Any, args: dict[str, Any], *_: Any) -> dict[str, Any]:
    return {"status": "success", "data": f"{args['word']} has {len(args['word'])} letters"}


COUNT = {
    "name": "count",
    "cmds": [count],
    "schema": {
        "type": "function",
        "function": {
            "name": "count",
            "description": "Count a word's letters",
            "parameters": {
                "type": "object",
                "properties": {"word": {"type": "string"}},
                "required": ["word"],
            },
        },
    },
    "output": {
        "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(self, stdout[0]),
    },
}


async def test_each_request_starts_with_the_one_before(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        words = ["alpha", "beta", "gamma"]
        server.enqueue(
            *(openai_tool_calls([(f"c{i}", "count", {"word": w})]) for i, w in enumerate(words))
        )
        server.enqueue(openai_text("Done: 5, 4, 5."))
        adapter = create_adapter(
            AdapterSettings(name="openai_compatible", url=server.url + "/v1", model="m")
        )
        registry = tool_registry({"count": COUNT}, {}, tool_opts={})

        def tools(chat: Chat) -> ToolSystem:
            return built_tool_system(
                chat=chat,
                registry=registry,
                approver=ScriptedApprover(),
                events=RecordingEvents(),
                cwd=tmp_path,
                yolo=True,
            )

        chat = Chat(chat_id="p", adapter=adapter, view=RecordingView(), tool_factory=tools)  # type: ignore[arg-type]
        assert chat.submit("@{count} count alpha, beta and gamma")
        assert chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat._task), 20)
        await adapter.aclose()
    bodies = [r.json() for r in server.requests if r.method == "POST"]
    assert len(bodies) == 4
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert json.dumps(after["tools"]) == json.dumps(before["tools"])
        sent = [json.dumps(m) for m in before["messages"]]
        now = [json.dumps(m) for m in after["messages"]]
        assert now[: len(sent)] == sent, "an earlier message changed between rounds"
        assert len(now) == len(sent) + 2  # the answer's calls and their result
