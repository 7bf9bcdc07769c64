"""What the command sandbox adds to starting a command: `true` through run_process, confined and
unconfined, alternating in one run (the difference of the medians is the figure)."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.settings import Permissions
from codecompanion.tools.runtime.process import run_process

from .figures import Results

PER_RUN = 20  # commands of each kind per measured run


async def _one(project: Path, sandbox: CommandSandbox | None) -> tuple[float, float]:
    """(ms to prepare the sandbox, ms from prepare to the finished command)."""
    began = time.perf_counter()
    launch = sandbox.launch(project) if sandbox is not None else None
    prepared = time.perf_counter()
    result = await run_process(["true"], cwd=project, sandbox=launch)
    assert result.exit_code == 0, result.stderr
    return (prepared - began) * 1000, (time.perf_counter() - began) * 1000


async def _measure(project: Path, sandbox: CommandSandbox) -> tuple[float, float, float]:
    """Medians over PER_RUN pairs: (unconfined, confined, preparing alone) in ms."""
    plain: list[float] = []
    confined: list[float] = []
    prepare: list[float] = []
    for _ in range(PER_RUN):
        plain.append((await _one(project, None))[1])
        ready, total = await _one(project, sandbox)
        prepare.append(ready)
        confined.append(total)
    return statistics.median(plain), statistics.median(confined), statistics.median(prepare)


def run(results: Results, workdir: Path, runs: int) -> None:
    """Record `sandbox_start` (confined − unconfined start of `true`) for each run."""
    sandbox = CommandSandbox(Permissions(), Detector())
    if not sandbox.active:
        results.note(f"no sandbox here ({sandbox.availability.reason}): not measured", 0)
        return
    project = workdir / "sandbox-project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    asyncio.run(_measure(project, sandbox))  # warm: the probe, imports, page cache
    for _ in range(runs):
        plain, confined, prepare = asyncio.run(_measure(project, sandbox))
        results.add("sandbox_start", confined - plain)
        results.note("start `true` unconfined (ms)", plain)
        results.note("start `true` in the sandbox (ms)", confined)
        results.note("preparing the sandbox alone (ms)", prepare)
