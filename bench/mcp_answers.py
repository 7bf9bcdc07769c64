"""How long the host's event loop stalls while an MCP stdio server sends a 20 MB answer: the
worst gap of a 5 ms ticker during the call, against a real SDK-built server."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from codecompanion.mcp.config import parse_server
from codecompanion.mcp.session import Connection

from .figures import Results

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "garbling_server.py"
MEGABYTES = 20
TICK = 0.005


async def _stall(connection: Connection) -> tuple[float, float]:
    """(worst loop stall in ms, the call's seconds) over one big answer."""
    worst, done = 0.0, False

    async def tick() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            worst, last = max(worst, now - last - TICK), now

    ticker = asyncio.ensure_future(tick())
    began = time.perf_counter()
    outcome = await connection.call("big", {"megabytes": MEGABYTES}, 600)
    took = time.perf_counter() - began
    done = True
    await ticker
    assert not outcome.is_error, outcome.text[:200]
    return worst * 1000, took


async def _measure(runs: int) -> list[tuple[float, float]]:
    config = parse_server("bench", {"cmd": [sys.executable, str(SERVER)], "timeout": 600})
    connection = Connection(config, {}, {}, errlog=None)
    await connection.start()
    try:
        await _stall(connection)  # warm: the checker process's imports, page cache
        return [await _stall(connection) for _ in range(runs)]
    finally:
        await connection.stop()


def run(results: Results, workdir: Path, runs: int) -> None:
    """Record `mcp_stall` (worst event-loop stall during a 20 MB MCP answer) for each run."""
    del workdir
    for stall, took in asyncio.run(_measure(runs)):
        results.add("mcp_stall", stall)
        results.note(f"{MEGABYTES} MB MCP answer: call time (s)", took)
