# ruff: noqa: E501 - the tables of secrets read best one line each

"""One masker for every secret the plugin knows: what the config names is known before any is
used (literal and `env:` keys, credential headers, MCP servers' secret env and header values,
the builtin adapters' key variables), `cmd:` results once they run, and a reload forgets none."""

from __future__ import annotations

from pathlib import Path

from codecompanion.adapters import KeyResolver
from codecompanion.adapters.catalog import remember_config
from codecompanion.adapters.secret_mask import mask, masked_item, masked_result
from codecompanion.context.rules import Rules
from codecompanion.context.sources import ContextItem
from codecompanion.messages import ToolResult
from codecompanion.workspace import HostOptions, Workspace


def test_the_config_s_secrets_are_known_before_use() -> None:
    keys = KeyResolver()
    adapters = {
        "openai": {"api_key": "sk-literal-0123456789", "headers": {"X-Trace": "not-a-secret-x"}},
        "anthropic": {
            "api_key": "env:MY_KEY",
            "headers": {"Authorization": "Bearer tok-abcdefgh1"},
        },
        "ollama": {"api_key": "cmd:pass show llm"},
    }
    mcp = {
        "servers": {
            "docs": {
                "cmd": ["x"],
                "env": {"API_TOKEN": "mcp-token-12345678", "HOME_DIR": "/usr/share/x"},
            },
            "web": {"url": "https://x", "headers": {"X-Api-Key": "env:WEB_KEY"}},
        }
    }
    env = {
        "MY_KEY": "sk-env-abcdefghij",
        "WEB_KEY": "web-key-87654321",
        "GEMINI_API_KEY": "gm-key-55555555",
    }
    remember_config(keys, adapters, mcp, env)
    assert keys.known == {
        "sk-literal-0123456789",
        "sk-env-abcdefghij",
        "Bearer tok-abcdefgh1",
        "tok-abcdefgh1",
        "Bearer",
        "mcp-token-12345678",
        "web-key-87654321",
        "gm-key-55555555",
    } - {"Bearer"}  # too short to mask
    assert mask("a sk-env-abcdefghij b /usr/share/x", keys.known) == "a *** b /usr/share/x"


def test_results_and_context_are_masked_whole() -> None:
    secrets = {"sk-abcdefgh", "sk-abcdefgh-longer"}
    result = ToolResult(
        "success", "key sk-abcdefgh-longer", "shown sk-abcdefgh", "full sk-abcdefgh"
    )
    masked = masked_result(result, secrets)
    assert (masked.for_llm, masked.for_user, masked.full_output) == (
        "key ***",
        "shown ***",
        "full ***",
    )
    assert masked_result(ToolResult("success", "clean"), secrets) == ToolResult("success", "clean")
    item = ContextItem("file", "a.py", "python", ("KEY = 'sk-abcdefgh'", "x = 1"))
    assert masked_item(item, secrets).lines == ("KEY = '***'", "x = 1")


def test_a_reload_keeps_every_secret_masked(tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text("adapters = {'openai': {'api_key': 'sk-first-0123456789'}}\n")
    ws = Workspace(HostOptions(config_file=str(config), data_dir=str(tmp_path / "d")), env={})
    known = ws.keys.known
    config.write_text("adapters = {'openai': {'api_key': 'sk-second-0123456789'}}\n")
    ws.reload()
    assert ws.keys.known is known
    assert {"sk-first-0123456789", "sk-second-0123456789"} <= known


def test_rules_files_are_masked_too(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("the key is sk-rules-0123456789\n")
    loaded = Rules(tmp_path, home=tmp_path / "home", secrets={"sk-rules-0123456789"}).load()
    assert "sk-rules" not in loaded.prompt() and "the key is ***" in loaded.prompt()
