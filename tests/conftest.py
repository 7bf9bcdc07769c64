"""Shared pytest fixtures."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator

import pytest

from codecompanion.loopback.server import LoopbackServer
from tests.support.proctable import kill_groups, with_marker


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
