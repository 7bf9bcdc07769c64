"""The screen a person sees: Neovim's real TUI in tmux (send-keys in, capture-pane out)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.nvim import INIT, nvim_binary, nvim_env, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    session = f"cc-{uuid.uuid4().hex[:8]}"
    socket = str(tmp_path / "tmux.sock")

    def run(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", socket, *args], capture_output=True, text=True, check=True, timeout=20
        ).stdout

    run.session = session  # type: ignore[attr-defined]
    yield run
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=20)


def test_chat_on_the_real_screen(
    tmux: Callable[..., str], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("The answer is forty-two.", chunks=8))
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {{'url': '{provider_server.url}/v1',"
        " 'api_key': 'k', 'model': 'm'}}\n"
    )
    env = nvim_env(tmp_path, {"window": {"layout": "buffer"}}, config)
    exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
    command = f"env {exports} {nvim_binary()} -u {INIT} -i NONE -n"
    session = tmux.session  # type: ignore[attr-defined]
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", command)

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", session)

    wait_for(lambda: "[No Name]" in screen() or "~" in screen(), 15)
    tmux("send-keys", "-t", session, ":CodeCompanionChat", "Enter")
    wait_for(lambda: "## Me" in screen(), 15)
    tmux("send-keys", "-t", session, "G", "o", "What is the answer?", "Escape")
    tmux("send-keys", "-t", session, "Enter")

    def answered() -> str | None:
        text = screen()
        return text if "forty-two" in text else None

    shown = wait_for(answered, 20)
    assert "## LLM (openai · m)" in shown
    assert "What is the answer?" in shown
    rows = shown.splitlines()
    answer_row = next(i for i, row in enumerate(rows) if "forty-two" in row)
    header_row = next(i for i, row in enumerate(rows) if row.startswith("## LLM"))
    assert answer_row > header_row


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"
