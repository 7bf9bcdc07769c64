"""What the real-agent tier's tests share: why a tier test cannot run, the scripted model's
fixture, opening an agent's chat and the tool results an agent sent to the model."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer
from tests.support.nvim import Editor, wait_for

ROOT = Path(__file__).resolve().parents[2]


def why_not(environ: dict[str, str] | None, agent: Path, name: str) -> str | None:
    """Why the tier cannot run `agent` here (None: it can)."""
    if (environ or {}).get("CODECOMPANION_AGENTS") != "1":
        return "the real-agent tier runs with `make test-agents`"
    if not agent.exists():
        return f"{name} is not installed ({agent}): `make agents` installs it"
    names = sorted(interface for _index, interface in socket.if_nameindex())
    if names != ["lo"]:
        return f"not in a network namespace with only loopback (interfaces: {names})"
    return None


@pytest.fixture
def model() -> Iterator[LoopbackServer]:
    """The agent's model: a scripted OpenAI-compatible server on 127.0.0.1."""
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()


def open_agent(ed: Editor, agent: str) -> int:
    """`:CodeCompanionChat adapter=<agent>` and the new chat's buffer."""
    before = ed.lua("return require('codecompanion').last_chat()")
    ed.nvim.command(f"CodeCompanionChat adapter={agent}")
    return int(
        wait_for(
            lambda: (b := ed.lua("return require('codecompanion').last_chat()")) != before and b,
            15,
        )
    )


def tool_results(server: LoopbackServer) -> list[str]:
    """The tool results the agent sent to the model, in order."""
    found: list[str] = []
    for request in server.requests:
        body = request.body if isinstance(request.body, dict) else {}
        found += [
            str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"
        ]
    return list(dict.fromkeys(found))


def approval_items(ed: Editor) -> list[list[str]]:
    """The choices of every approval question shown so far."""
    return [p["items"] for p in ed.prompts() if p["kind"] == "codecompanion.approval"]
