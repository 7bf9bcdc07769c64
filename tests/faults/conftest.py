"""Fault suites run on real Neovim: the tests/nvim fixtures, with a fast-failing adapter config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.nvim_fixtures import config_file, start_nvim

__all__ = ["config_file", "fast_config", "start_nvim"]

# Small timeouts and retries so each fault resolves well inside a second.
FAST = (
    "adapters['openai'].update(read_timeout=0.4, max_retries=1, retry_backoff=0.01,"
    " retry_max_wait=0.2)\n"
)


@pytest.fixture
def fast_config(config_file: Callable[[str], Path]) -> Callable[[str], Path]:
    """The loopback config file with short read timeout, one retry and tiny backoff."""
    return lambda extra="": config_file(FAST + extra)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every fault test drives Neovim: mark it like the tests/nvim ones."""
    for item in items:
        if "tests/faults" in str(item.fspath):
            item.add_marker(pytest.mark.nvim)
