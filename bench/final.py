"""`python -m bench.final` (`make bench-final`): the performance issue's final figures, in one
sitting on a quiet machine, written to `bench/final.md`.

1. The shared harness as the issue runs it: `bench.py --plugins cc,ours --scenarios
   a1k,a10k_8c,b1,b20,c --probe-scenarios a10k_8c,b20 --runs 4`, quiet.
2. The same beside one busy process per core (`while True: pass`, started and stopped here).
3. `make bench-sbs` (`python -m bench.sbs`: 5 runs and the 400-turn growth run, quiet, then
   loaded).

`bench/final.md` holds each run's heading (when, commit, load average, machine), the issue's
done-when with a verdict per line, and both tables, ready for the README's Performance section.
The results stay beside it (`final-issue*.json`, `final-sbs*.json`; `--table-only` writes the
file again from them).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import sbs

HERE = Path(__file__).resolve().parent
ISSUE = argparse.Namespace(
    scenarios="a1k,a10k_8c,b1,b20,c",
    probe_scenarios="a10k_8c,b20",
    runs=4,
    growth=0,
    out=HERE / "final-issue.json",
)
SBS_OUT = HERE / "final-sbs.json"
REPORT = HERE / "final.md"


@dataclass(frozen=True)
class Goal:
    """One line of the issue's done-when: a row of `sbs.ROWS`, in the quiet or loaded run."""

    text: str
    label: str  # the row's label
    loaded: bool
    holds: Callable[[float | None, float | None], bool]  # (CodeCompanion, ours) medians


def _ratio_at_least(least: float) -> Callable[[float | None, float | None], bool]:
    return lambda cc, ours: cc is not None and bool(ours) and cc / (ours or 1) >= least


def _ours_at_most(most: float) -> Callable[[float | None, float | None], bool]:
    return lambda cc, ours: ours is not None and ours <= most


GOALS = (
    Goal("b20 ≥ 4× (quiet)", "b20: 20 read_file calls, same", False, _ratio_at_least(4)),
    Goal("a10k_8c ≥ 6× (quiet)", "a10k_8c: 10,000 chunks, same", False, _ratio_at_least(6)),
    Goal(
        "a1k ≥ 4× (quiet)",
        "a1k: 1,000 chunks, submit → last chunk shown",
        False,
        _ratio_at_least(4),
    ),
    Goal(
        "b1 ≥ 3× (quiet)",
        "b1: 1 read_file, turn-1 end → turn-2 request",
        False,
        _ratio_at_least(3),
    ),
    Goal(
        "c ≥ 2.5× (quiet)",
        "c: run_command `sleep 2`, overhead beyond 2 s",
        False,
        _ratio_at_least(2.5),
    ),
    Goal(
        "cold b20 under half of CodeCompanion's (quiet)",
        "b20 cold: the first exchange after Neovim starts, same",
        False,
        _ratio_at_least(2),
    ),
    Goal(
        "editor's worst reply during a10k_8c ≤ 16 ms (loaded)",
        "editor worst latency, a10k_8c",
        True,
        _ours_at_most(16),
    ),
    Goal(
        "editor's worst reply during b20 ≤ 16 ms (loaded)",
        "editor worst latency, b20",
        True,
        _ours_at_most(16),
    ),
)


def medians(data: dict[str, Any], label: str) -> tuple[float | None, float | None]:
    """CodeCompanion's and our median of the row called `label` in one run's results."""
    row = next(r for r in sbs.ROWS if r.label == label)

    def pick(run: dict[str, Any]) -> float | None:
        value = sbs._get(run, row.metric)
        return None if value is None else value - row.shift

    return sbs._median(data, "cc", row, pick), sbs._median(data, "ours", row, pick)


def verdicts(quiet: dict[str, Any], loaded: dict[str, Any]) -> list[str]:
    """One markdown line per goal: met or not, with the figures it was judged on."""
    lines = []
    for goal in GOALS:
        cc, ours = medians(loaded if goal.loaded else quiet, goal.label)
        shown = f"CodeCompanion {sbs._cell(cc, 'ms')}, ours {sbs._cell(ours, 'ms')}"
        if cc and ours:
            shown += f", {cc / ours:.1f}×"
        lines.append(f"- {'✓' if goal.holds(cc, ours) else '✗'} {goal.text}: {shown}")
    return lines


def report(issue: dict[str, Any], issue_loaded: dict[str, Any], sbs_text: str) -> str:
    """bench/final.md: the issue's runs (headings, done-when, table), then make bench-sbs."""
    command = " ".join(
        [
            "bench.py --plugins cc,ours",
            f"--scenarios {ISSUE.scenarios}",
            f"--probe-scenarios {ISSUE.probe_scenarios}",
            f"--runs {ISSUE.runs}",
        ]
    )
    parts = [
        "# Final figures of the performance issue",
        "",
        f"## The shared harness as the issue runs it (`{command}`)",
        "",
        f"- {sbs.heading(issue, 'quiet')}",
        f"- {sbs.heading(issue_loaded, 'loaded')}",
        "",
        "Done when:",
        "",
        *verdicts(issue, issue_loaded),
        "",
        sbs.paired_table(issue, issue_loaded),
        "",
        "## `make bench-sbs` (5 runs, the growth run; quiet, then loaded)",
        sbs_text.strip(),
        "",
    ]
    return "\n".join(parts)


def run_all(folder: Path) -> str:
    """The three runs; what `make bench-sbs` printed."""
    for load in ("quiet", "loaded"):
        if sbs.run_load(folder, ISSUE, load) != 0:
            raise SystemExit(f"bench.final: the harness failed ({load})")
    return sbs_table(run=True)


def sbs_table(run: bool) -> str:
    """`python -m bench.sbs` (run, or its tables only), its output captured."""
    argv = ["--out", str(SBS_OUT)] + ([] if run else ["--table-only"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = sbs.main(argv)
    if status != 0:
        raise SystemExit(f"bench.final: bench.sbs exited with {status}")
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Run everything (or only write the report again) and write bench/final.md."""
    parser = argparse.ArgumentParser(prog="python -m bench.final", description=__doc__)
    parser.add_argument("--table-only", action="store_true", help="write final.md from results")
    args = parser.parse_args(argv)
    folder = sbs.harness_dir()
    if folder is None:
        print(
            "bench.final: no side-by-side harness (../shared/anchor or ANCHOR_DIR)", file=sys.stderr
        )
        return 1
    text = sbs_table(run=False) if args.table_only else run_all(folder)
    issue = json.loads(ISSUE.out.read_text())
    issue_loaded = json.loads(sbs.loaded_path(ISSUE.out).read_text())
    REPORT.write_text(report(issue, issue_loaded, text), encoding="utf-8")
    print(REPORT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
