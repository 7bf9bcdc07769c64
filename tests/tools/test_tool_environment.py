"""Tool processes get a cleaned environment: no provider key (builtin adapters' and configured
ones'), no *_API_KEY/*_TOKEN/*_SECRET-style variable, no Neovim socket; `opts.tool_system.env`
drops or passes more. `env | sort` run by the model leaves no key in the buffer, the saved chat,
the log or the next request. Real Neovim, real host, real shell."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.adapters.catalog import key_variables
from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.child_env import EnvPolicy
from codecompanion.workspace import tool_env_opts
from tests.support.nvim import Editor, wait_for
from tests.support.secrets import everything_shown, everything_written
from tests.support.shell_system import run_command_system

StartNvim = Callable[..., Editor]

# Variable name → must the tool process see it? (the value is a unique secret-looking string)
VARIABLES = {
    "OPENAI_API_KEY": False,  # a builtin adapter's key
    "ANTHROPIC_API_KEY": False,
    "MY_PROVIDER_CRED": False,  # the configured adapter reads its key from here
    "GITHUB_TOKEN": False,
    "HF_TOKEN": False,
    "AWS_SECRET_ACCESS_KEY": False,
    "AWS_SESSION_TOKEN": False,
    "DB_PASSWORD": False,
    "SOME_SECRET": False,
    "NPM_AUTH": False,
    "CORP_INTERNAL_URL": False,  # dropped by the config's `drop`
    "BUILD_TOKEN": True,  # passed by the config's `pass`
    "PLAIN_SETTING": True,
}


def values() -> dict[str, str]:
    return {name: f"v-{name.lower()}-{uuid.uuid4().hex}" for name in VARIABLES}


def test_the_policy_drops_keys_and_sockets() -> None:
    opts = tool_env_opts(
        {"drop": ["CORP_*"], "pass": ["BUILD_TOKEN", "NVIM", "MY_PROVIDER_CRED"]},
        {"mine": {"api_key": "env:MY_PROVIDER_CRED"}},
    )
    policy = EnvPolicy.from_opts(opts)
    base = {**values(), "NVIM": "/tmp/nvim.sock", "NVIM_LISTEN_ADDRESS": "/tmp/x", "PWD": "/"}
    kept = policy.environment(base)
    expected = {name for name, seen in VARIABLES.items() if seen} | {"PWD"}
    assert set(kept) == expected
    assert "OPENAI_API_KEY" in key_variables({}) and "GITHUB_TOKEN" in key_variables({})


async def test_env_run_by_a_tool_shows_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = values()
    for name, value in {**secrets, "NVIM": "/tmp/sock", "NVIM_LISTEN_ADDRESS": "/tmp/s"}.items():
        monkeypatch.setenv(name, value)
    # Built as every chat is: the configured adapter's key variable is withheld by the builder.
    tools, chat = run_command_system(
        tmp_path,
        {"allowed_in_yolo_mode": True},
        opts={"env": {"drop": ["CORP_*"], "pass": ["BUILD_TOKEN"]}},
        adapters={"mine": {"api_key": "env:MY_PROVIDER_CRED"}},
    )
    await tools.run([ToolCall("e", "run_command", {"cmd": "env | sort"})])
    shown = chat.result("e").for_llm + str(chat.result("e").for_user)
    seen = {line.split("=", 1)[0] for line in shown.splitlines() if "=" in line}
    for name, visible in VARIABLES.items():
        assert (name in seen) is visible, name
        assert (secrets[name] in shown) is visible, name
    assert "NVIM" not in seen and "NVIM_LISTEN_ADDRESS" not in seen
    assert "PATH" in seen and "HOME" in seen


def test_keys_never_reach_the_chat_the_log_or_the_request(
    start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path
) -> None:
    secrets = values()
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {{'url': '{provider_server.url}/v1', "
        "'api_key': 'env:MY_PROVIDER_CRED', 'model': 'gpt-test'}}\n"
        "opts = {'tool_system': {'env': {'drop': ['CORP_*'], 'pass': ['BUILD_TOKEN']}}}\n"
    )
    provider_server.enqueue(
        openai_tool_calls([("env1", "run_command", {"cmd": "env | sort"})]),
        openai_text("listed"),
    )
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(setup={"log_level": "DEBUG"}, config_file=config, env=secrets, cwd=project)
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("@{run_command} list the environment")
    wait_for(lambda: "listed" in ed.text(bufnr), 15)
    requests = provider_server.wait_for_requests(2)
    assert requests[0].headers["authorization"] == f"Bearer {secrets['MY_PROVIDER_CRED']}"
    sent = json.dumps(requests[1].body)
    assert "PLAIN_SETTING" in sent and secrets["BUILD_TOKEN"] in sent  # the output went back
    assert "NVIM=" not in sent and "NVIM_LISTEN_ADDRESS" not in sent
    written = everything_written(ed)
    assert any(path.endswith(".json") for path in written)  # the saved chat
    assert any(path.endswith("codecompanion.log") for path in written)
    everything = everything_shown(ed) + "".join(written.values()) + sent
    assert "listed" in ed.text(bufnr)
    leaked = [n for n, visible in VARIABLES.items() if not visible and secrets[n] in everything]
    assert leaked == []
    assert os.environ.get("MY_PROVIDER_CRED") == secrets["MY_PROVIDER_CRED"]


async def test_a_command_tool_gets_the_same_cleaned_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.tools import call, command_tool, make

    secrets = values()
    for name, value in {**secrets, "NVIM": "/tmp/sock"}.items():
        monkeypatch.setenv(name, value)
    h = make(
        {"runner": command_tool([["env"]])},
        cwd=tmp_path,
        opts={"auto_submit": False, "env": {"drop": ["CORP_*"], "pass": ["BUILD_TOKEN"]}},
        adapters={"mine": {"api_key": "env:MY_PROVIDER_CRED"}},
    )
    c = call("runner", {"lang": "x"})
    await h.run(c)
    shown = h.chat.result(c.id).for_llm
    seen = {line.split("=", 1)[0] for line in shown.splitlines() if "=" in line}
    assert "PATH" in seen and "NVIM" not in seen
    assert {n for n in VARIABLES if n in seen} == {n for n, v in VARIABLES.items() if v}


def test_the_environment_is_filtered_once_and_again_when_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every command a tool starts takes the environment: filtered once while it stays the same.
    names: list[str] = []
    dropped = EnvPolicy.dropped

    def counted(policy: EnvPolicy, name: str) -> bool:
        names.append(name)
        return dropped(policy, name)

    monkeypatch.setattr(EnvPolicy, "dropped", counted)
    policy = EnvPolicy.from_opts({"drop": ["CORP_*"]})
    monkeypatch.setenv("CC_PLAIN", "one")
    first = policy.environment()
    assert first["CC_PLAIN"] == "one" and len(names) == len(os.environ)
    first["CC_PLAIN"] = "changed by its caller"
    assert policy.environment()["CC_PLAIN"] == "one" and len(names) == len(os.environ)
    # A changed, added or secret variable is seen at the next start.
    monkeypatch.setenv("CC_PLAIN", "two")
    monkeypatch.setenv("CORP_URL", "internal")
    monkeypatch.setenv("CC_SOME_TOKEN", uuid.uuid4().hex)
    again = policy.environment()
    assert again["CC_PLAIN"] == "two" and "CORP_URL" not in again and "CC_SOME_TOKEN" not in again
    assert len(names) == 2 * len(os.environ) - 2
    # Another policy filters on its own.
    assert "CORP_URL" in EnvPolicy().environment()
