"""The summary of a records file: solved share and what each solved task cost, per plugin."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Summary:
    """One plugin's figures over the records of a suite."""

    plugin: str
    tasks: int
    runs: int
    pass_at_1: float
    pass_all: float
    solved_runs: int
    prompt_per_solved: float | None
    cached_per_solved: float | None
    wall_per_solved: float | None
    malformed: int
    repeated: int
    tool_calls: int


def summarize(plugin: str, records: Sequence[Mapping[str, Any]]) -> Summary:
    """pass@1 (mean share of runs solved per task), pass^N (tasks solved in every run), costs."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_task[str(record["task"])].append(bool(record["solved"]))
    runs = min((len(v) for v in by_task.values()), default=0)
    solved = sum(bool(r["solved"]) for r in records)
    tasks = len(by_task)

    def per_solved(field: str) -> float | None:
        return sum(float(r[field]) for r in records) / solved if solved else None

    return Summary(
        plugin=plugin,
        tasks=tasks,
        runs=runs,
        pass_at_1=sum(sum(v) / len(v) for v in by_task.values()) / tasks if tasks else 0.0,
        pass_all=sum(all(v) for v in by_task.values()) / tasks if tasks else 0.0,
        solved_runs=solved,
        prompt_per_solved=per_solved("prompt_tokens"),
        cached_per_solved=per_solved("cached_tokens"),
        wall_per_solved=per_solved("wall_s"),
        malformed=sum(int(r["malformed_calls"]) for r in records),
        repeated=sum(int(r["repeated_calls"]) for r in records),
        tool_calls=sum(int(r["tool_calls"]) for r in records),
    )


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


def table(records: Iterable[Mapping[str, Any]]) -> str:
    """The per-plugin summary, the ratios of the first plugin to the others, and each task."""
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[str(record["plugin"])].append(record)
    summaries = [summarize(name, rows) for name, rows in sorted(grouped.items())]
    lines = [
        "| plugin | tasks | runs | pass@1 | pass^N | prompt tokens / solved | cached / solved "
        "| wall s / solved | calls | malformed | repeated |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.plugin} | {s.tasks} | {s.runs} | {s.pass_at_1:.0%} | {s.pass_all:.0%} "
            f"| {_num(s.prompt_per_solved)} | {_num(s.cached_per_solved)} "
            f"| {_num(s.wall_per_solved)} | {s.tool_calls} | {s.malformed} | {s.repeated} |"
        )
    lines += ["", *_ratios(summaries), "", *_per_task(grouped)]
    return "\n".join(lines)


def _ratios(summaries: Sequence[Summary]) -> list[str]:
    """ours / theirs for the costs (below 1: ours spends less per solved task)."""
    named = {s.plugin: s for s in summaries}
    ours, theirs = named.get("ours"), named.get("theirs")
    if ours is None or theirs is None:
        return []
    out = []
    for label, a, b in (
        ("prompt tokens / solved", ours.prompt_per_solved, theirs.prompt_per_solved),
        ("wall time / solved", ours.wall_per_solved, theirs.wall_per_solved),
    ):
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        out.append(f"ours/theirs {label}: {ratio}")
    return out


def _per_task(grouped: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    plugins = sorted(grouped)
    tasks = sorted({str(r["task"]) for rows in grouped.values() for r in rows})
    lines = ["| task | " + " | ".join(plugins) + " |", "|---|" + "---|" * len(plugins)]
    for task in tasks:
        cells = []
        for plugin in plugins:
            rows = [r for r in grouped[plugin] if r["task"] == task]
            solved = sum(bool(r["solved"]) for r in rows)
            ended = ",".join(sorted({str(r["ended"]) for r in rows}))
            cells.append(f"{solved}/{len(rows)} ({ended})" if rows else "-")
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return lines
