"""API key specs: literal, env:VAR, cmd:command (run with asyncio, cached per resolver)."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from codecompanion.adapters import KeyResolver, key_problem
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.errors import AuthenticationError


async def test_literal_and_missing_spec() -> None:
    keys = KeyResolver(env={})
    assert await keys.resolve("sk-literal") == "sk-literal"
    assert await keys.resolve(None) is None


async def test_env_spec() -> None:
    keys = KeyResolver(env={"MY_KEY": " sk-env \n", "EMPTY": ""})
    assert await keys.resolve("env:MY_KEY") == "sk-env"
    with pytest.raises(
        AuthenticationError, match="^no API key: environment variable EMPTY is not set$"
    ):
        await keys.resolve("env:EMPTY")
    with pytest.raises(AuthenticationError, match="MISSING is not set"):
        await keys.resolve("env: MISSING")


def counting_command(tmp_path: Path, output: str) -> tuple[str, Path]:
    log = tmp_path / "runs.txt"
    script = f"import sys; open({str(log)!r}, 'a').write('run\\n'); print({output!r})"
    return f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(script)}", log


async def test_cmd_output_is_cached_per_resolver(tmp_path: Path) -> None:
    spec, log = counting_command(tmp_path, "  sk-from-cmd  ")
    keys = KeyResolver()
    first = await keys.resolve(spec)
    second = await keys.resolve(spec)
    other = await KeyResolver().resolve(spec)
    assert first == second == other == "sk-from-cmd"
    assert log.read_text().count("run") == 2


async def test_concurrent_cmd_resolves_run_the_command_once(tmp_path: Path) -> None:
    spec, log = counting_command(tmp_path, "sk-once")
    keys = KeyResolver()
    results = await asyncio.gather(*(keys.resolve(spec) for _ in range(5)))
    assert results == ["sk-once"] * 5
    assert log.read_text().count("run") == 1


async def test_failing_and_silent_commands() -> None:
    keys = KeyResolver()
    with pytest.raises(
        AuthenticationError, match=r"api_key command \(sh \.\.\.\) failed \(exit 3\): nope"
    ):
        await keys.resolve("cmd:sh -c 'echo nope >&2; exit 3'")
    with pytest.raises(AuthenticationError, match="printed nothing"):
        await keys.resolve("cmd:true")


def test_problem_reports_without_running_anything() -> None:
    keys = KeyResolver(env={"ANTHROPIC_API_KEY": "x"})
    assert key_problem(keys, None, "openai") == "environment variable OPENAI_API_KEY is not set"
    assert key_problem(keys, None, "anthropic") is None
    assert key_problem(keys, None, "ollama") is None
    assert key_problem(keys, "cmd:pass show openai", "openai") is None
    assert key_problem(keys, "sk-literal", "openai") is None
    assert key_problem(keys, None, "nope") == "unknown adapter 'nope'"


def test_key_problem_knows_adapters_from_installed_packages() -> None:
    class PluginAdapter(OpenAIAdapter):
        default_api_key = "env:PLUGIN_PROVIDER_KEY"

    keys = KeyResolver(env={})
    plugins = {"from_plugin": PluginAdapter}
    problem = key_problem(keys, None, "from_plugin", plugins)
    assert problem == "environment variable PLUGIN_PROVIDER_KEY is not set"
    assert (
        key_problem(KeyResolver(env={"PLUGIN_PROVIDER_KEY": "k"}), None, "from_plugin", plugins)
        is None
    )
    assert keys.problem("env:ALSO_MISSING") == "environment variable ALSO_MISSING is not set"
