"""The real-model tier for agents: Mistral Vibe and Qwen Code (installed by `make agents`) each
answer one prompt from the real local model, through real Neovim (`make test-real`, with
REALMODEL_URL)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.nvim import Editor, wait_for

ROOT = Path(__file__).resolve().parents[2]
VIBE = Path(os.environ.get("CODECOMPANION_VIBE") or ROOT / ".venv-agents/vibe/bin/vibe-acp")
QWEN = Path(
    os.environ.get("CODECOMPANION_QWEN") or ROOT / ".venv-agents/qwen/node_modules/.bin/qwen"
)


@pytest.mark.timeout(1800)  # Vibe's system prompt is read at ~25 tokens/s
def test_vibe_answers_a_prompt_from_the_real_model(
    start_nvim: Callable[..., Editor], model_url: str, tmp_path: Path, scenario: dict[str, Any]
) -> None:
    if not VIBE.exists():
        pytest.skip(f"Mistral Vibe is not installed ({VIBE}): `make agents` installs it")
    home = tmp_path / "vibe-home"
    home.mkdir()
    (home / "config.toml").write_text(
        'active_model = "local"\n'
        "enable_telemetry = false\nenable_update_checks = false\n"
        "enable_auto_update = false\nenable_notifications = false\n"
        f'[[providers]]\nname = "llamacpp"\napi_base = "{model_url}"\napi_key_env_var = ""\n'
        '[[models]]\nname = "local"\nprovider = "llamacpp"\nalias = "local"\n'
    )
    config = tmp_path / "codecompanion.py"
    config.write_text(
        f"acp = {{'mistral_vibe': {{'cmd': [{str(VIBE)!r}],"
        f" 'env': {{'VIBE_HOME': {str(home)!r}}}}}}}\n"
    )
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(config_file=config, cwd=project)
    ed.nvim.command("CodeCompanionChat adapter=mistral_vibe")
    chat = int(wait_for(lambda: ed.lua("return require('codecompanion').last_chat()"), 15))
    hello(ed, chat, "mistral_vibe", scenario)


def hello(ed: Editor, chat: int, agent: str, scenario: dict[str, Any]) -> None:
    """The agent answers a greeting from the real model: a non-empty answer, status success."""
    ed.send("Reply with one short sentence saying hello. Do not use any tool.")
    done = ed.wait_event("CodeCompanionChatDone", timeout=1500)
    text = ed.text(chat)
    answer = text.split(f"## {agent}", 1)[-1].split("## Me", 1)[0].strip()
    scenario["note"] = f"status {done[0]['data'].get('status')}; answer: {answer[:80]!r}"
    assert done[0]["data"].get("status") == "success", text
    assert answer.split("\n", 1)[-1].strip(), text


@pytest.mark.timeout(1800)
def test_qwen_code_answers_a_prompt_from_the_real_model(
    start_nvim: Callable[..., Editor], model_url: str, tmp_path: Path, scenario: dict[str, Any]
) -> None:
    if not QWEN.exists():
        pytest.skip(f"Qwen Code is not installed ({QWEN}): `make agents` installs it")
    home = tmp_path / "qwen-home"
    (home / ".qwen").mkdir(parents=True)
    settings = {
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "security": {"auth": {"selectedType": "openai"}},
    }
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    env = {
        "HOME": str(home),
        "OPENAI_API_KEY": "none",
        "OPENAI_BASE_URL": model_url,
        "OPENAI_MODEL": "local",
    }
    # Qwen Code's own system prompt and tools are about 20k tokens (more than the server's
    # default window, 13 minutes' reading at 25 tokens/s): --bare and a one-line system prompt
    # leave about 3k.
    cmd = [str(QWEN), "--acp", "--bare", "--system-prompt", "You are a helpful assistant."]
    config = tmp_path / "codecompanion.py"
    config.write_text(f"acp = {{'qwen_code': {{'cmd': {cmd!r}, 'env': {env!r}}}}}\n")
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(config_file=config, cwd=project)
    ed.nvim.command("CodeCompanionChat adapter=qwen_code")
    chat = int(wait_for(lambda: ed.lua("return require('codecompanion').last_chat()"), 15))
    hello(ed, chat, "qwen_code", scenario)
