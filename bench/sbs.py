"""`python -m bench.sbs`: this plugin beside the Lua CodeCompanion, measured in one interleaved run.

The measuring is done by the shared harness in `../shared/anchor` (beside this checkout, or
`ANCHOR_DIR`): `setup.sh` prepares `ANCHOR_ROOT` (a venv with Neovim 0.11.4 and the Lua plugin),
`bench.py` drives both plugins run by run on the same Neovim, fake server and typing. This module
runs it, then prints the figures we hold ourselves to with both plugins' medians and their ratio
(CodeCompanion / ours: above 1 we are faster or smaller). Without the harness it says so and runs
our own bench (`python -m bench`) alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIOS = "a1k,a10k_8c,b1,b20,c"
PROBED = "a1k,a10k_8c,b20,c,a1k_paced"


@dataclass(frozen=True)
class Row:
    """One figure: where it is in the harness's results and the target (a ratio or a bound)."""

    label: str
    scenario: str
    metric: str
    probe: bool = False
    min_ratio: float | None = None  # CodeCompanion / ours at least this
    loaded_ratio: float | None = None  # the same beside one busy process per core
    max_ours: float | None = None  # ours at most this (ms or MiB)
    shift: float = 0.0  # subtracted from both (the 2 s of `sleep 2`)
    unit: str = "ms"


ROWS = (
    Row(
        "b1: 1 read_file, turn-1 end → turn-2 request",
        "b1",
        "warm.turn1_end_to_turn2_recv_ms",
        min_ratio=3,
        loaded_ratio=3,
    ),
    Row(
        "b20: 20 read_file calls, same",
        "b20",
        "warm.turn1_end_to_turn2_recv_ms",
        min_ratio=4,
        loaded_ratio=3,
    ),
    Row(
        "b20 cold: the first exchange after Neovim starts, same",
        "b20",
        "cold.turn1_end_to_turn2_recv_ms",
        min_ratio=2,
    ),
    Row(
        "c: run_command `sleep 2`, overhead beyond 2 s",
        "c",
        "warm.turn1_end_to_turn2_recv_ms",
        min_ratio=2.5,
        loaded_ratio=2,
        shift=2000,
    ),
    Row(
        "a1k: 1,000 chunks, submit → last chunk shown",
        "a1k",
        "warm.submit_to_last_chunk_rendered_ms",
        min_ratio=4,
        loaded_ratio=3,
    ),
    Row(
        "a10k_8c: 10,000 chunks, same",
        "a10k_8c",
        "warm.submit_to_last_chunk_rendered_ms",
        min_ratio=6,
        loaded_ratio=5,
    ),
    Row(
        "paced (200 chunks/s): last chunk shown after sent",
        "a1k_paced",
        "warm.server_last_chunk_sent_to_rendered_ms",
        probe=True,
        max_ours=8,
    ),
    Row("editor worst latency, a1k", "a1k", "warm.probe_max_ms", probe=True, max_ours=16),
    Row("editor worst latency, a10k_8c", "a10k_8c", "warm.probe_max_ms", probe=True, max_ours=16),
    Row("editor worst latency, b20", "b20", "warm.probe_max_ms", probe=True, max_ours=16),
    Row(
        "editor worst latency, c (whole exchange)",
        "c",
        "warm.probe_max_ms",
        probe=True,
        max_ours=16,
    ),
    Row(
        "editor worst latency, c (while the tool runs)",
        "c",
        "warm.probe_during_tools_max_ms",
        probe=True,
        max_ours=16,
    ),
    Row(
        "editor worst latency, paced stream",
        "a1k_paced",
        "warm.probe_max_ms",
        probe=True,
        max_ours=16,
    ),
    Row("memory after a1k: Neovim VmHWM", "a1k", "rss_after_cold.VmHWM", unit="MiB"),
    Row(
        "memory after a1k: host VmRSS (ours only)",
        "a1k",
        "rss_after_cold.host_VmRSS",
        max_ours=30,
        unit="MiB",
    ),
)


def _get(run: dict[str, Any], path: str) -> float | None:
    value: Any = run
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def _median(
    data: dict[str, Any], plugin: str, row: Row, pick: Callable[[dict[str, Any]], Any]
) -> float | None:
    values = [
        pick(run)
        for run in data["runs"]
        if run["plugin"] == plugin and run["scenario"] == row.scenario and run["probe"] == row.probe
    ]
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None


def _cell(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    value = value / 1024 if unit == "MiB" else value
    return f"{value:,.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def _verdict(
    row: Row, cc: float | None, ours: float | None, loaded: bool = False
) -> tuple[str, str]:
    """(ratio, target with its verdict) of one row; under load, the loaded ratio target."""
    ratio = cc / ours if cc is not None and ours and ours > 0 else None
    text = f"{ratio:.1f}×" if ratio is not None else "—"
    if row.min_ratio is not None:
        least = (row.loaded_ratio or row.min_ratio) if loaded else row.min_ratio
        ok = ratio is not None and ratio >= least
        return text, f"≥ {least:g}× {'✓' if ok else '✗'}"
    if row.max_ours is not None:
        scale = 1024 if row.unit == "MiB" else 1
        ok = ours is not None and ours / scale <= row.max_ours
        return text, f"ours ≤ {row.max_ours:g} {row.unit} {'✓' if ok else '✗'}"
    return text, ""


def _cells(data: dict[str, Any], row: Row, loaded: bool) -> list[str] | None:
    """CodeCompanion's median, ours, the ratio and the verdict of one row (None: no figures)."""

    def pick(run: dict[str, Any]) -> float | None:
        value = _get(run, row.metric)
        return None if value is None else value - row.shift

    cc, ours = _median(data, "cc", row, pick), _median(data, "ours", row, pick)
    if cc is None and ours is None:
        return None
    ratio, target = _verdict(row, cc, ours, loaded)
    return [_cell(cc, row.unit), _cell(ours, row.unit), ratio, target]


def _correct(data: dict[str, Any]) -> tuple[int, int]:
    """(exchanges answered correctly, exchanges) of one run."""
    checks = [
        run[phase]["ok"]
        for run in data["runs"]
        for phase in ("cold", "warm")
        if isinstance(run.get(phase), dict) and "ok" in run[phase]
    ]
    checks += [p["ok"] for run in data["runs"] for p in run.get("points", [])]
    return sum(checks), len(checks)


_CORRECT = "(answers verbatim, tool results in order, request counts)"


def table(data: dict[str, Any], loaded: bool = False) -> str:
    """The markdown table of ROWS (medians, CodeCompanion / ours) and the growth line."""
    lines = [
        "| figure | CodeCompanion | ours | ratio | target |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        cells = _cells(data, row, loaded)
        if cells is not None:
            lines.append("| " + " | ".join([row.label, *cells]) + " |")
    lines.extend(_growth_rows(data))
    good, total = _correct(data)
    lines.append(f"\nEvery exchange correct: {good}/{total} {_CORRECT}.")
    return "\n".join(lines)


def paired_table(quiet: dict[str, Any], loaded: dict[str, Any]) -> str:
    """One table of both runs: each figure's quiet row, then its loaded row."""
    lines = [
        "| figure | load | CodeCompanion | ours | ratio | target |",
        "|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        shown = False
        for data, name in ((quiet, "quiet"), (loaded, "loaded")):
            cells = _cells(data, row, name == "loaded")
            if cells is not None:
                lines.append("| " + " | ".join(["" if shown else row.label, name, *cells]) + " |")
                shown = True
    lines.extend(line.replace(" | ", " | quiet | ", 1) for line in _growth_rows(quiet))
    counts = ["{}/{} {}".format(*_correct(d), n) for d, n in ((quiet, "quiet"), (loaded, "loaded"))]
    lines.append(f"\nEvery exchange correct: {', '.join(counts)} {_CORRECT}.")
    return "\n".join(lines)


def _growth_rows(data: dict[str, Any]) -> list[str]:
    rows = []
    points = [
        (run["plugin"], p)
        for run in data["runs"]
        if run["scenario"] == "hist"
        for p in run["points"]
    ]
    for turns in sorted({p["prior_turns"] for _, p in points if p["prior_turns"]}):
        cc, ours = (_submit_median(points, plugin, turns) for plugin in ("cc", "ours"))
        ratio = f"{cc / ours:.1f}×" if cc and ours else "—"
        ok = ours is not None and ours <= 20
        rows.append(
            f"| {turns} prior turns: submit → request at the server | {_cell(cc, 'ms')} | "
            f"{_cell(ours, 'ms')} | {ratio} | ours ≤ 20 ms {'✓' if ok else '✗'} |"
        )
    return rows


def _submit_median(points: list[tuple[str, Any]], plugin: str, turns: int) -> float | None:
    """One plugin's median submit → first request time after `turns` prior turns."""
    values = [
        p["submit_to_req1_recv_ms"]
        for name, p in points
        if name == plugin and p["prior_turns"] == turns
    ]
    return statistics.median(values) if values else None


def machine() -> str:
    """CPU model, core count and Python version of this machine, in one line."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def harness_dir() -> Path | None:
    """The shared harness folder, if there is one."""
    configured = os.environ.get("ANCHOR_DIR")
    # ../shared/anchor beside the checkout (or beside the folder of its git worktrees).
    folders = (
        [Path(configured)] if configured else [p / "shared" / "anchor" for p in ROOT.parents[:2]]
    )
    return next((f for f in folders if (f / "bench.py").is_file()), None)


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """`count` busy processes (one spinning Python loop each) for the length of the block."""
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def free_port() -> int:
    """A TCP port nothing listens on now (two runs at once must not share a fake server)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_harness(folder: Path, args: argparse.Namespace, out: Path, growth: int) -> int:
    """setup.sh, then bench.py with both plugins; returns its exit status."""
    anchor_root = Path(os.environ.get("ANCHOR_ROOT") or ROOT / ".anchor")
    env = {**os.environ, "ANCHOR_ROOT": str(anchor_root), "OURS_ROOT": str(ROOT)}
    env.setdefault("FAKE_LLM_PORT", str(free_port()))
    subprocess.run(["bash", str(folder / "setup.sh")], env=env, check=True)
    # The host as users run it: its bytecode cached. Without (PYTHONDONTWRITEBYTECODE set, or
    # a module changed since) every host start compiles the package: ~1 MiB more RSS, more CPU.
    venv = ROOT / ".venv" / "bin" / "python"  # the host's interpreter (its bytecode's tag)
    python = str(venv) if venv.is_file() else sys.executable
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "rplugin")], check=True)
    command = [
        str(anchor_root / "venv" / "bin" / "python"), str(folder / "bench.py"),
        "--plugins", "cc,ours", "--scenarios", args.scenarios,
        "--probe-scenarios", args.probe_scenarios, "--runs", str(args.runs),
        "--out", str(out),
    ]  # fmt: skip
    if growth:
        command += ["--growth", "hist", "--hist", "400", "--growth-runs", str(growth)]
    print("bench.sbs:", " ".join(command), file=sys.stderr, flush=True)
    return subprocess.run(command, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    """Run the side-by-side harness (or ours alone without it) and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.sbs", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs per scenario (5)")
    parser.add_argument("--scenarios", default=SCENARIOS)
    parser.add_argument("--probe-scenarios", default=PROBED)
    parser.add_argument(
        "--growth", type=int, default=1, help="runs of 400 prior turns (1; 0: none)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "sbs-results.json")
    parser.add_argument(
        "--load",
        choices=("quiet", "loaded", "both"),
        default="both",
        help="quiet machine, one busy process per core beside both plugins, or both (both)",
    )
    parser.add_argument("--table-only", action="store_true", help="print the tables of --out")
    args = parser.parse_args(argv)
    loads = ("quiet", "loaded") if args.load == "both" else (args.load,)
    if not args.table_only:
        folder = harness_dir()
        if folder is None:
            print(
                "bench.sbs: no side-by-side harness (../shared/anchor, or ANCHOR_DIR): "
                "running ours alone (python -m bench)",
                file=sys.stderr,
            )
            from .__main__ import main as ours_alone

            return ours_alone([])
        for load in loads:
            status = run_load(folder, args, load)
            if status != 0:
                return status
    _print_table(args, loads)
    return 0


def loaded_path(out: Path) -> Path:
    """Where the loaded run's results go, beside the quiet run's."""
    return out.with_name(out.stem + "-loaded" + out.suffix)


def run_load(folder: Path, args: argparse.Namespace, load: str) -> int:
    """One harness run, quiet or beside one CPU hog per core (started and stopped here)."""
    began, before = time.time(), os.getloadavg()
    out = args.out if load == "quiet" else loaded_path(args.out)
    if load == "quiet":
        status = run_harness(folder, args, out, args.growth)
    else:
        with cpu_hogs(os.cpu_count() or 1):
            status = run_harness(folder, args, out, 0)
    print(f"bench.sbs: {load} run took {time.time() - began:.0f} s", file=sys.stderr)
    if out.is_file():
        data = json.loads(out.read_text())
        data["meta"]["sbs"] = {
            "load": load,
            "hogs": 0 if load == "quiet" else os.cpu_count() or 1,
            "loadavg_before": before,
            "loadavg_after": os.getloadavg(),
            "commit": commit(),
            "runs": args.runs,
            "machine": machine(),
        }
        out.write_text(json.dumps(data, indent=1))
    return status


def commit() -> str:
    """The short commit of this checkout ("+" when it has changes), or "?"."""

    def git(*words: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *words], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "?"
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def heading(data: dict[str, Any], load: str) -> str:
    """Which run a table's figures come from: when, what commit, on what machine, what load."""
    meta = data["meta"]
    facts = meta.get("sbs", {})
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(meta["started"]))
    if load == "quiet":
        what = "quiet: nothing else started by the run"
    else:
        hogs = facts.get("hogs", os.cpu_count())
        what = (
            f"loaded: one busy process per core ({hogs} × `while True: pass`) in the run's own "
            "session, beside both plugins"
        )
    load_avg = ""
    if "loadavg_before" in facts:
        before, after = facts["loadavg_before"][0], facts["loadavg_after"][0]
        load_avg = f", load average {before:.2f} before and {after:.2f} after"
    # Counted, not asked for: a run stopped early saved only its complete rounds.
    runs = max(
        Counter((r["plugin"], r["scenario"], r["probe"]) for r in data["runs"]).values(),
        default=0,
    )
    return (
        f"{what}. Run {when}, commit {facts.get('commit', '?')}{load_avg}; "
        f"{facts.get('machine', machine())}; n = {runs} interleaved runs, medians"
    )


def _print_table(args: argparse.Namespace, loads: tuple[str, ...]) -> None:
    """The heading lines and the table of the runs' results (one table for both loads)."""
    found = {}
    for load in loads:
        path = args.out if load == "quiet" else loaded_path(args.out)
        if path.is_file():
            found[load] = json.loads(path.read_text())
        else:
            print(f"bench.sbs: no {load} results in {path}", file=sys.stderr)
    print()
    for load, data in found.items():
        print(f"- {heading(data, load)}")
    print()
    if len(found) == 2:
        print(paired_table(found["quiet"], found["loaded"]))
    for load, data in found.items() if len(found) == 1 else ():
        print(table(data, loaded=load == "loaded"))


if __name__ == "__main__":
    sys.exit(main())
