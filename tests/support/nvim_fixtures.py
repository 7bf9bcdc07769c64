"""The fixtures that start a real headless Neovim with the plugin, for every folder that needs one
(a conftest imports them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.support.nvim import INIT, Editor, nvim_binary, nvim_env


@pytest.fixture
def start_nvim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Editor]]:
    """Start Neovim with given setup() options and env; every instance is closed after the test."""
    started: list[pynvim.Nvim] = []

    def start(
        setup: dict[str, Any] | None = None,
        config_file: Path | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Editor:
        for key, value in {**nvim_env(tmp_path, setup or {}, config_file), **(env or {})}.items():
            monkeypatch.setenv(key, value)
        if cwd is not None:
            monkeypatch.chdir(cwd)
        argv = [nvim_binary(), "--embed", "--headless", "-u", str(INIT), "-i", "NONE", "-n"]
        nvim = pynvim.attach("child", argv=argv)
        started.append(nvim)
        return Editor(nvim, tmp_path)

    yield start
    for nvim in started:
        try:
            nvim.command("qa!")
        except (OSError, EOFError, pynvim.NvimError):
            pass
        try:
            nvim.close()
        except (OSError, EOFError, RuntimeError):
            pass


@pytest.fixture
def config_file(tmp_path: Path, provider_server: Any) -> Callable[[str], Path]:
    """Write a user config file pointing the openai adapter at the loopback server."""

    def write(extra: str = "") -> Path:
        path = tmp_path / "codecompanion.py"
        path.write_text(
            "adapter = 'openai'\n"
            f"adapters = {{'openai': {{'url': '{provider_server.url}/v1', 'api_key': 'sk-test',"
            " 'model': 'gpt-test'}}\n" + extra
        )
        return path

    return write
