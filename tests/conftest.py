"""Shared pytest fixtures: the loopback provider, a process marker, and a real Neovim
(`start_nvim`, `config_file`) for the tests of any folder that drive one."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator

import pytest

from codecompanion.loopback.server import LoopbackServer
from tests.support.nvim_fixtures import config_file, start_nvim
from tests.support.proctable import kill_groups, with_marker

__all__ = ["config_file", "start_nvim"]


@pytest.fixture
def provider_server() -> Iterator[LoopbackServer]:
    """A started loopback fake provider, stopped after the test."""
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique word for this test's command lines; whatever still carries it after the test is
    killed: its process groups, and each process (one may have left its group)."""
    word = f"ccmark{uuid.uuid4().hex[:12]}"
    yield word
    left = with_marker(word)
    kill_groups({p.pgid for p in left})
    for proc in left:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start Neovim carry the nvim mark wherever they are (as under tests/nvim)."""
    for item in items:
        if "start_nvim" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.nvim)
