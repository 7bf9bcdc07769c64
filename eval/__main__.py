"""`python -m eval`: run a task suite through the plugins against a model, record, summarize."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from .drivers.ours import Ours, OursOptions
from .drivers.theirs import Theirs
from .proxy import RecordingProxy, Sampling
from .records import load_records
from .report import table
from .runner import Plugin, Runner
from .shared import ROOT, anchor_root, start_realmodel
from .task import TaskError, load_suite

HERE = Path(__file__).resolve().parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    p.add_argument("--tasks", type=Path, default=HERE / "tasks", help="a folder of task folders")
    p.add_argument("--runs", type=int, default=1, help="runs of each task per plugin (1)")
    p.add_argument(
        "--out",
        type=Path,
        default=HERE / "results" / "records.jsonl",
        help="records file (appended; what it holds is not run again)",
    )
    p.add_argument(
        "--url",
        default="",
        help="an OpenAI-compatible server's base URL "
        "(default: ../shared/realmodel's server on --port)",
    )
    p.add_argument("--port", type=int, default=8093, help="the realmodel server's port (8093)")
    p.add_argument("--plugins", default="ours,theirs", help="ours, theirs or both (ours,theirs)")
    p.add_argument("--only", default="", help="comma-separated task names to run")
    p.add_argument(
        "--temperature",
        default="0.2",
        help="temperature set on every request, seed = run number ('keep': as sent)",
    )
    p.add_argument("--tool-calls", default="auto", help="ours: auto, native or prompt")
    p.add_argument(
        "--constrained-calls",
        action="store_true",
        help="ours: ask again, held to the call schema, for a call written but not run",
    )
    p.add_argument(
        "--short-descriptions",
        choices=("auto", "true", "false"),
        default="auto",
        help="ours: tool schemas with first-sentence descriptions (auto: for a window <= 8k)",
    )
    p.add_argument("--label", default="ours", help="ours's name in the records (for variants)")
    p.add_argument(
        "--plugin-root",
        type=Path,
        default=ROOT,
        help="ours: the checkout to run (a snapshot, so a long run is not changed)",
    )
    p.add_argument(
        "--timeout-scale",
        type=float,
        default=1.0,
        help="multiply each task's timeout_s (a loaded machine reads prompts slower)",
    )
    p.add_argument(
        "--again",
        default="",
        help="comma-separated ends to run again though recorded (e.g. timeout)",
    )
    p.add_argument(
        "--dump", type=Path, default=None, help="a folder to write each chat request's body into"
    )
    p.add_argument("--summary", action="store_true", help="only print the summary of --out")
    return p


def _commit(root: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    )
    return done.stdout.strip()


def _short_config(setting: str) -> str:
    """The config line for `--short-descriptions` (none for the default)."""
    if setting == "auto":
        return ""
    return f"opts['tool_system']['short_descriptions'] = {setting == 'true'}\n"


def _plugins(args: argparse.Namespace) -> list[Plugin]:
    chosen = [p.strip() for p in args.plugins.split(",") if p.strip()]
    plugins: list[Plugin] = []
    for name in chosen:
        if name == "ours":
            options = OursOptions(
                tool_calls=args.tool_calls,
                root=args.plugin_root.resolve(),
                constrained_calls=args.constrained_calls,
                extra_config=_short_config(args.short_descriptions),
            )
            ours = Ours(options)
            ours.name = args.label
            plugins.append(ours)
        elif name == "theirs":
            plugins.append(Theirs(anchor_root()))
        else:
            raise SystemExit(f"eval: unknown plugin {name!r} (ours, theirs)")
    return plugins


def main(argv: list[str] | None = None) -> int:
    """Run, then print the summary of everything the records file holds."""
    args = _parser().parse_args(argv)
    args.out = args.out.resolve()
    if not args.summary:
        try:
            tasks = load_suite(args.tasks)
        except TaskError as exc:
            print(f"eval: {exc}", file=sys.stderr)
            return 2
        if args.timeout_scale != 1.0:
            tasks = [replace(t, timeout_s=t.timeout_s * args.timeout_scale) for t in tasks]
        if args.only:
            wanted = {n.strip() for n in args.only.split(",")}
            tasks = [t for t in tasks if t.name in wanted]
        url = (args.url or start_realmodel(args.port)).rstrip("/").removesuffix("/v1")
        temperature = None if args.temperature == "keep" else float(args.temperature)
        proxy = RecordingProxy(url, Sampling(temperature=temperature), args.dump).start()
        again = tuple(e.strip() for e in args.again.split(",") if e.strip())
        setup = {
            "timeout_scale": args.timeout_scale,
            "url": url,
            "commit": _commit(args.plugin_root),
            "temperature": temperature,
            "tool_calls": args.tool_calls,
            "constrained_calls": args.constrained_calls,
            "short_descriptions": args.short_descriptions,
            "tasks": str(args.tasks),
        }
        try:
            Runner(proxy, args.out, setup, again=again).run_suite(tasks, _plugins(args), args.runs)
        finally:
            proxy.stop()
    records = list(load_records(args.out).values())
    print(table(records))
    print(json.dumps({"records": len(records), "file": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
