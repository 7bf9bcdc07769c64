"""Fixtures for the builtin tools' tests: a project root and a tool system stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.builtin import FakeTools


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project root (resolved)."""
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def tools(project: Path) -> FakeTools:
    """A tool system stand-in rooted at `project`, without an editor."""
    return FakeTools(cwd=project)
