"""a1/a2/a3 and e: a fast stream into the chat buffer, Neovim's availability, memory after a1."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer

from .figures import Results
from .session import Session, config_text, worst_latency
from .turns import text_turn


@dataclass(frozen=True)
class StreamRun:
    """One measured answer: submit → sentinel in the buffer (ms), worst probe latency (ms)."""

    elapsed: float
    worst: float
    to_server: float
    apply_max: float
    apply_total: float
    batches: int


def stream_once(session: Session, server: LoopbackServer, chunks: int, tag: str) -> StreamRun:
    """Open a chat, ask, and time the answer of `chunks` chunks until its last one is shown."""
    sentinel = f"BENCHEND{tag}"
    server.enqueue(text_turn(chunks, sentinel))
    before = len(server.requests)
    opened = session.open_chat()
    bufnr = int(opened["bufnr"])
    session.lua("_G.bench.watch(...)", bufnr, sentinel)
    session.probe_samples()  # forget what came before
    session.lua("_G.bench.batches()")
    session.clear_events()
    session.send("Explain how the chat buffer stays responsive.")
    session.wait("seen")
    done = session.wait("CodeCompanionChatDone")
    submit, seen = session.lua("return { _G.bench.submit, _G.bench.seen }")
    samples = session.probe_samples()
    applied = session.lua("return _G.bench.batches()")
    session.close_buffer(bufnr)
    worst = worst_latency(samples, submit / 1e9, float(done["t"]) / 1e9)
    arrived = server.wait_for_requests(before + 1)[before].arrived
    return StreamRun(
        (seen - submit) / 1e6,
        worst,
        (arrived - submit / 1e9) * 1000,
        float(applied["max"]),
        float(applied["total"]),
        int(applied["count"]),
    )


def _notes(results: Results, key: str, measured: StreamRun) -> None:
    results.note(f"{key}: worst probe latency (ms)", measured.worst)
    results.note(f"{key}: submit → request at the server (ms)", measured.to_server)
    results.note(f"{key}: longest render batch in Neovim (ms)", measured.apply_max)
    results.note(f"{key}: all render batches in Neovim (ms)", measured.apply_total)
    results.note(f"{key}: render batches", measured.batches)


def run(results: Results, workdir: Path, runs: int) -> None:
    """a1 (1,000 chunks), e (memory after each a1), a2 (10,000 chunks) and a3 (worst latency)."""
    with LoopbackServer() as server:
        session = Session(workdir / "stream", config_text(server.url))
        try:
            worst_a1: list[float] = []
            worst_a2: list[float] = []
            for index in range(runs + 1):  # the first run warms up (host start, imports)
                measured = stream_once(session, server, 1_000, f"A1R{index}")
                if index:
                    results.add("a1", measured.elapsed)
                    _notes(results, "a1", measured)
                    worst_a1.append(measured.worst)
                    nvim_mb, host_mb = session.rss_mb()
                    results.add("e_nvim", nvim_mb)
                    results.add("e_host", host_mb)
            for index in range(runs + 1):
                measured = stream_once(session, server, 10_000, f"A2R{index}")
                if index:
                    results.add("a2", measured.elapsed)
                    _notes(results, "a2", measured)
                    worst_a2.append(measured.worst)
            results.extend("a3", (max(a, b) for a, b in zip(worst_a1, worst_a2, strict=True)))
        finally:
            session.close()
