"""`python -m bench.checkpoints`: what checkpoints cost — a capture of a 1k- and a 10k-file
project with a few changed files, and the store's growth over 100 small turns.

A capture here is what the host runs on its worker thread before a tool round: the stat walk,
the changed files read and stored, the changed folders' trees, the chat's journal written.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from codecompanion.checkpoints import Checkpoints
from codecompanion.checkpoints.scan import RACY_NS

LINE = "    value = compute(items, limit=42)  # a line of an ordinary source file\n"


def make_project(root: Path, files: int, seed: int = 1) -> list[Path]:
    """`files` source-like files of ~2 KB in folders of 40, with a .git and node_modules beside."""
    rng = random.Random(seed)
    paths = []
    for n in range(files):
        path = root / f"pkg{n // 40:03d}" / f"module_{n:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# file {n} {rng.random()}\n" + LINE * 28)
        paths.append(path)
    for skipped in (".git/objects/ab", "node_modules/lib"):
        (root / skipped).mkdir(parents=True, exist_ok=True)
        for n in range(200):
            (root / skipped / f"f{n}").write_bytes(os.urandom(64))
    # Settled files, as in a project being worked on: outside the window in which a file just
    # written (mtime or ctime) is read again at the next capture.
    time.sleep(RACY_NS / 1e9 + 0.2)
    return paths


def capture_times(files: int, runs: int, changed: int = 3) -> dict[str, float]:
    """Milliseconds of one capture with `changed` files edited since the last one (median)."""
    with tempfile.TemporaryDirectory(prefix="cc-bench-cp-") as tmp:
        root = Path(tmp) / "project"
        paths = make_project(root, files)
        cp = Checkpoints(Path(tmp) / "data")
        began = time.perf_counter()
        cp.record("bench", root, "turn", "user")
        cold = (time.perf_counter() - began) * 1000
        cp.record("bench", root, "tools", "user")  # the racy-window files settle
        rng = random.Random(files)
        timings, cpu = [], []
        for run in range(runs):
            for path in rng.sample(paths, changed):
                with open(path, "a") as handle:
                    handle.write(f"# edit {run}\n")
            began, began_cpu = time.perf_counter(), time.thread_time()
            cp.record("bench", root, "tools_done", "chat")
            timings.append((time.perf_counter() - began) * 1000)
            cpu.append((time.thread_time() - began_cpu) * 1000)
        cp.close()
        return {
            "files": files,
            "cold_ms": round(cold, 1),
            "median_ms": round(statistics.median(timings), 1),
            "max_ms": round(max(timings), 1),
            "cpu_median_ms": round(statistics.median(cpu), 1),
            "runs": runs,
        }


def store_growth(files: int = 1000, turns: int = 100) -> dict[str, float]:
    """Bytes the store grows by over `turns` turns that each edit two small files."""
    with tempfile.TemporaryDirectory(prefix="cc-bench-cp-") as tmp:
        root = Path(tmp) / "project"
        paths = make_project(root, files)
        project_bytes = sum(p.stat().st_size for p in paths)
        cp = Checkpoints(Path(tmp) / "data")
        cp.record("bench", root, "turn", "user")
        first = cp.store.size()
        rng = random.Random(turns)
        for turn in range(turns):
            if turn:
                cp.record("bench", root, "turn", "user")
            cp.record("bench", root, "tools", "user")
            for path in rng.sample(paths, 2):
                with open(path, "a") as handle:
                    handle.write(f"    step_{turn} = {turn}  # the model's small edit\n")
            cp.record("bench", root, "tools_done", "chat")
        last = cp.store.size()
        journal = (Path(tmp) / "data" / "chats" / "bench.json").stat().st_size
        cp.close()
        return {
            "files": files,
            "turns": turns,
            "project_kb": round(project_bytes / 1024, 1),
            "first_capture_kb": round(first / 1024, 1),
            "growth_kb": round((last - first) / 1024, 1),
            "per_turn_kb": round((last - first) / 1024 / turns, 2),
            "journal_kb": round(journal / 1024, 1),
        }


def main(argv: list[str] | None = None) -> int:
    """Print the figures (and write them as JSON with --out)."""
    parser = argparse.ArgumentParser(prog="python -m bench.checkpoints", description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    results = {
        "capture": [capture_times(int(n), args.runs) for n in args.sizes.split(",")],
        "growth": store_growth(turns=args.turns),
        "load": list(os.getloadavg()),
    }
    for row in results["capture"]:
        print(
            f"capture, {row['files']:>6} files, 3 changed: median {row['median_ms']} ms "
            f"wall, {row['cpu_median_ms']} ms CPU (max {row['max_ms']} ms wall; first capture "
            f"{row['cold_ms']} ms; {row['runs']} runs)"
        )
    g = results["growth"]
    print(
        f"store growth over {g['turns']} turns of 2 small edits in {g['files']} files "
        f"({g['project_kb']} KB): first capture {g['first_capture_kb']} KB, then "
        f"+{g['growth_kb']} KB ({g['per_turn_kb']} KB/turn); journal {g['journal_kb']} KB"
    )
    print(f"load average: {', '.join(f'{x:.2f}' for x in results['load'])}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
