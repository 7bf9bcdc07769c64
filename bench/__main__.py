"""`python -m bench`: run the scenarios, print the table, write bench/results.json."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .figures import Results

HERE = Path(__file__).resolve().parent
GROUPS = ("pure", "grep", "stream", "tools", "startup", "sandbox", "mcp")


def _scenarios(results: Results, workdir: Path, runs: int) -> dict[str, Callable[[], None]]:
    from . import grep, mcp_answers, pure, sandbox, startup, streaming, toolcalls

    return {
        "pure": lambda: pure.run(results, runs),
        "grep": lambda: grep.run(results, workdir, runs),
        "stream": lambda: streaming.run(results, workdir, runs),
        "tools": lambda: toolcalls.run(results, workdir, runs),
        "startup": lambda: startup.run(results, workdir, runs),
        "sandbox": lambda: sandbox.run(results, workdir, runs),
        "mcp": lambda: mcp_answers.run(results, workdir, runs),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench; a missed target is in the table (and the exit status with --strict)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="measured runs per scenario (7)")
    parser.add_argument(
        "--only", default=",".join(GROUPS), help=f"comma-separated groups of {', '.join(GROUPS)}"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results.json", help="results file")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in GROUPS]
    if unknown or args.runs < 1:
        parser.error(f"unknown group(s) {', '.join(unknown)}" if unknown else "--runs must be >= 1")
    results = Results()
    with tempfile.TemporaryDirectory(prefix="cc-bench-") as tmp:
        scenarios = _scenarios(results, Path(tmp), args.runs)
        for name in chosen:
            began = time.monotonic()
            print(f"bench: {name} ...", file=sys.stderr, flush=True)
            scenarios[name]()
            print(f"bench: {name} took {time.monotonic() - began:.1f} s", file=sys.stderr)
    print(results.table())
    results.write(args.out)
    missed = results.misses()
    print(
        f"\nwrote {args.out}; "
        + (f"missed: {', '.join(missed)}" if missed else "every target holds")
    )
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
