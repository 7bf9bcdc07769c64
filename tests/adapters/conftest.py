"""Fixtures for adapter tests: adapters pointed at the loopback server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.support.adapters import SECRET, AdapterFactory

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.adapters.http_adapter import HTTPAdapter
from codecompanion.loopback.server import LoopbackServer


@pytest.fixture
async def make_adapter(provider_server: LoopbackServer) -> AsyncIterator[AdapterFactory]:
    """Build adapters aimed at the loopback server (fast retries), closed after the test."""
    made: list[HTTPAdapter] = []

    def factory(name: str, **overrides: Any) -> HTTPAdapter:
        options: dict[str, Any] = {
            "url": provider_server.url,
            "api_key": SECRET,
            "model": "test-model",
            "retry_backoff": 0.01,
            "read_timeout": 5.0,
        }
        options.update(overrides)
        adapter = create_adapter(AdapterSettings(name=name, **options))
        made.append(adapter)
        return adapter

    yield factory
    for adapter in made:
        await adapter.aclose()
