"""d: the first `:CodeCompanionChat` in a fresh Neovim, host start included."""

from __future__ import annotations

import time
from pathlib import Path

from .figures import Results
from .session import Session, config_text, worst_latency

SETTLE = 0.3  # seconds after the host answered that still count (its first renders)


def first_chat(workdir: Path, start: str = "lazy") -> tuple[float, float, float]:
    """Buffer shown (ms), Neovim blocked (ms) and host ready (ms) for one fresh Neovim.

    `lazy`: the command itself starts the host (the cold-start figure). `deferred` (the
    default of setup()): the host and the Markdown queries start right after start-up, and the
    user opens the first chat a second later.
    """
    session = Session(workdir, config_text("http://127.0.0.1:9"), {"start": start})
    try:
        if start == "deferred":
            time.sleep(1.0)
        session.probe_samples()
        opened = session.open_chat()
        created = session.wait("CodeCompanionChatCreated", timeout=20)
        t0, t1 = float(opened["t0"]) / 1e9, float(opened["t1"]) / 1e9
        ready = float(created["t"]) / 1e9
        time.sleep(max(0.0, ready + SETTLE - time.monotonic()))  # let the probe cover the window
        samples = session.probe_samples()
        command = (t1 - t0) * 1000
        blocked = max(command, worst_latency(samples, t0, ready + SETTLE))
        return command, blocked, (ready - t0) * 1000
    finally:
        session.close()


def run(results: Results, workdir: Path, runs: int) -> None:
    """d_shown and d_blocked, each run in a new Neovim (plus one warm-up for the OS caches)."""
    for index in range(runs + 1):
        shown, blocked, ready = first_chat(workdir / f"start{index}")
        if index:
            results.add("d_shown", shown)
            results.add("d_blocked", blocked)
            results.note("host answers the first chat (ms)", ready)
            _, deferred_blocked, _ = first_chat(workdir / f"deferred{index}", "deferred")
            results.note("Neovim blocked with the default start = deferred (ms)", deferred_blocked)
