"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codecompanion.loopback.server import LoopbackServer


@pytest.fixture
def provider_server() -> Iterator[LoopbackServer]:
    """A started loopback fake provider, stopped after the test."""
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()
