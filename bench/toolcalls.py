"""b1/b2/c: tool round trips, timed on the loopback server's clock.

The measure is the server's: from the moment it finished writing the model's tool-call answer
to the arrival of the next request (the tool results going back). c also takes Neovim's worst
probe latency over that span.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer

from .figures import Results
from .session import BenchError, Session, config_text, worst_latency
from .turns import text_turn, tool_call_turn

SLEEP = 2.0
# run_command always asks; an allow rule answers for `sleep 2`, as a user's config would.
ALLOW_SLEEP = "opts = {'tools': {'run_command': {'allow': ['sleep 2']}}}\n"
Call = tuple[str, str, dict[str, Any]]


def make_project(root: Path, files: int) -> Path:
    """A project of `files` Python modules of 120 lines each."""
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        lines = [f"def function_{index}_{n}(value):\n    return value * {n}\n" for n in range(60)]
        (project / f"module_{index}.py").write_text("".join(lines), encoding="utf-8")
    return project


def round_trip(
    session: Session, server: LoopbackServer, calls: list[Call], ask: str
) -> tuple[float, float, float]:
    """Ask; the model calls tools, then answers. Returns the server's times (s) and latency (ms).

    (end of the tool-call stream, arrival of the next request, Neovim's worst probe latency
    in between).
    """
    turn, chunks = tool_call_turn(calls)
    server.enqueue(turn, text_turn(3, "BENCHDONE"))
    before = len(server.requests)
    opened = session.open_chat()
    cpu = session.host_cpu_ms()
    session.probe_samples()
    session.clear_events()
    session.send(ask)
    session.wait("CodeCompanionChatDone", timeout=30 + SLEEP)
    samples = session.probe_samples()
    session.last_turn_cpu = session.host_cpu_ms() - cpu
    session.close_buffer(int(opened["bufnr"]))
    requests = server.wait_for_requests(before + 2, timeout=5)
    if chunks.sent_at is None:
        raise BenchError("the tool-call answer was never sent")
    check_reads(requests[before + 1].json(), calls)
    arrived = requests[before + 1].arrived
    return chunks.sent_at, arrived, worst_latency(samples, chunks.sent_at, arrived)


def check_reads(body: dict[str, Any], calls: list[Call]) -> None:
    """The read_file results sent back are the files' lines: a refused call is not measured."""
    results = {m.get("tool_call_id"): m.get("content") for m in body.get("messages", [])}
    for call_id, name, args in calls:
        content = str(results.get(call_id))
        if name == "read_file" and not content.startswith(f"{args['filepath']}: lines"):
            raise BenchError(f"{call_id} did not read its file: {content[:120]!r}")


def read_call(index: int) -> Call:
    """One whole-file read_file call, with every argument its schema requires."""
    args = {"filepath": f"module_{index}.py", "start_line_number_base_zero": 0}
    return (f"call_r{index}", "read_file", {**args, "end_line_number_base_zero": -1})


def run(results: Results, workdir: Path, runs: int) -> None:
    """b1 (one read_file), b2 (twenty in one answer), c (run_command `sleep 2`)."""
    project = make_project(workdir / "tools", 20)
    one: list[Call] = [read_call(0)]
    many: list[Call] = [read_call(i) for i in range(20)]
    sleep: list[Call] = [("call_s0", "run_command", {"cmd": "sleep 2"})]
    with LoopbackServer() as server:
        session = Session(workdir / "tools", config_text(server.url, ALLOW_SLEEP))
        try:
            session.cd(project)
            for key, calls in (("b1", one), ("b2", many)):
                for index in range(runs + 1):  # the first run warms up
                    ask = "Use @{read_file} to read the modules."
                    sent, arrived, _ = round_trip(session, server, calls, ask)
                    if index:
                        results.add(key, (arrived - sent) * 1000)
                        results.note(f"{key} host CPU ms per turn", session.last_turn_cpu)
            for index in range(runs + 1):
                ask = "Use @{run_command} to wait two seconds."
                sent, arrived, worst = round_trip(session, server, sleep, ask)
                if index:
                    results.add("c_overhead", (arrived - sent - SLEEP) * 1000)
                    results.add("c_latency", worst)
                    results.note("c host CPU ms per turn", session.last_turn_cpu)
        finally:
            session.close()
