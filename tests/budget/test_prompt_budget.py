"""Lean prompts: what a local model must read before the user's words — the system prompt and
the tool schemas of a chat's first request — stays under a budget for each builtin group and
tool (a 1.5B model on a CPU reads ~25 tokens/s: every 100 tokens here is 4 s on each new chat).

The real chat, the builtin tools as a default config registers them and the OpenAI-compatible
adapter, against a scripted server; tokens as the budget estimates them (`estimate_text`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.budget.count import estimate_text
from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.tools.builtin import BUILTIN_TOOLS, GROUPS
from codecompanion.workspace import HostOptions, Workspace
from tests.support.builder import built_chat
from tests.support.chat import RecordingView

# Estimated tokens of the system prompt and tool schemas, at most (about 5% above today's).
BUDGETS = {
    "files": 2100,
    "agent": 4550,
    "insert_edit_into_file": 740,
    "read_file": 440,
    "grep_search": 445,
    "run_command": 415,
}
ONE_TOOL = 380  # any other builtin tool alone
# `@{agent}` is the group (the tool of that name is offered with it).
MENTIONS = [*GROUPS, *(name for name in BUILTIN_TOOLS if name not in GROUPS)]


async def first_request(mention: str, tmp_path: Path) -> dict[str, Any]:
    """The body of the first request of a chat whose message mentions `@{mention}`."""
    with LoopbackServer() as server:
        server.enqueue(openai_text("ok"))
        settings = AdapterSettings(name="openai_compatible", url=server.url + "/v1", model="m")
        adapter = create_adapter(settings)
        registry = Workspace(HostOptions()).registry
        chat = built_chat(adapter, registry, tmp_path, RecordingView(), chat_id="b")
        assert chat.submit(f"@{{{mention}}} hi")
        assert chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat._task), 20)
        await adapter.aclose()
    (body,) = [r.json() for r in server.requests if r.method == "POST"]
    assert isinstance(body, dict)
    return body


def prompt_tokens(body: dict[str, Any]) -> int:
    """The estimated tokens of a request's system messages and tool schemas."""
    system = [m for m in body["messages"] if m["role"] == "system"]
    return estimate_text(json.dumps(system)) + estimate_text(json.dumps(body.get("tools", [])))


@pytest.mark.parametrize("name", MENTIONS)
async def test_the_first_request_of_each_builtin_stays_under_its_budget(
    name: str, tmp_path: Path
) -> None:
    body = await first_request(name, tmp_path)
    offered = [tool["function"]["name"] for tool in body.get("tools", [])]
    expected = GROUPS[name]["tools"] if name in GROUPS else (name,)
    assert sorted(offered) == sorted(expected)  # what is measured is what the mention offers
    assert prompt_tokens(body) <= BUDGETS.get(name, ONE_TOOL), name
