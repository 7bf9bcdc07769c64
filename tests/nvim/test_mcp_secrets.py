"""Secrets an MCP server's config reads from the environment (`env:NAME` in its `headers` or
`env`) never reach tool processes: `env` run by the model on real Neovim does not show them,
whatever the variables are called."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor

StartNvim = Callable[..., Editor]

CONFIG = """
mcp = {'servers': {
    'web': {'url': 'http://127.0.0.1:9/mcp', 'headers': {'X-Api': 'env:SERVICE_PAT'}},
    'local': {'cmd': ['true'], 'env': {'UPSTREAM': 'env:UPSTREAM_PAT'}},
}}
opts = {'tools': {'run_command': {'allow': ['env']}}}
"""


def test_mcp_secrets_from_the_environment_are_withheld_from_tool_processes(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("e1", "run_command", {"cmd": "env"})]), openai_text("done")
    )
    secrets = {"SERVICE_PAT": "pat-9f2c-service", "UPSTREAM_PAT": "pat-77ab-upstream"}
    ed = start_nvim(config_file=config_file(CONFIG), env={**secrets, "PLAIN_VALUE": "visible"})
    ed.open_chat()
    ed.send("@{run_command} show the environment")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    result = [m for m in provider_server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert len(result) == 1 and "PLAIN_VALUE=visible" in result[0]["content"]
    leaked = [name for name, value in secrets.items() if value in result[0]["content"]]
    assert leaked == []
