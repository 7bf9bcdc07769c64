"""Hardening suites: the tests/nvim fixtures for the few that need a real Neovim."""

from __future__ import annotations

import pytest

from tests.support.nvim_fixtures import config_file, start_nvim

__all__ = ["config_file", "start_nvim"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start Neovim carry the nvim mark, like those under tests/nvim."""
    for item in items:
        if "tests/hardening" in str(item.fspath) and "start_nvim" in getattr(
            item, "fixturenames", ()
        ):
            item.add_marker(pytest.mark.nvim)
