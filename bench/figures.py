"""The figures the bench reports: targets, collected samples, the table and results.json."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Spec:
    """One reported figure: what it measures, its unit and our target."""

    key: str
    label: str
    unit: str
    target: float


SPECS: tuple[Spec, ...] = (
    Spec("a1", "1,000 chunks: submit → last chunk in buffer", "ms", 100),
    Spec("a2", "10,000 chunks: submit → last chunk in buffer", "ms", 400),
    Spec("a3", "worst probe latency during a1 and a2", "ms", 16),
    Spec("b1", "1 read_file: tool stream end → next request", "ms", 10),
    Spec("b2", "20 read_file: tool stream end → next request", "ms", 40),
    Spec("c_overhead", "run_command `sleep 2`: round trip − 2 s", "ms", 15),
    Spec("c_latency", "run_command `sleep 2`: worst probe latency", "ms", 5),
    Spec("sandbox_start", "starting a command in the sandbox: added time", "ms", 10),
    Spec("d_shown", "first :CodeCompanionChat: buffer shown", "ms", 45),
    Spec("d_blocked", "first :CodeCompanionChat: Neovim blocked", "ms", 5),
    Spec("e_nvim", "after a1: Neovim RSS", "MB", 20),
    Spec("e_host", "after a1: host RSS", "MB", 30),
    Spec("f", "fuzzy edit on a 20,000-line file", "ms", 50),
    Spec("g", "stream parser cost per SSE event", "us", 20),
    Spec("mcp_stall", "20 MB MCP stdio answer: worst event-loop stall", "ms", 50),
)
SPEC_BY_KEY = {spec.key: spec for spec in SPECS}


@dataclass
class Results:
    """Samples per figure key, in the order they were measured."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    info: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        """Record one run's value of figure `key`."""
        if key not in SPEC_BY_KEY:
            raise KeyError(f"unknown figure {key!r}")
        self.samples.setdefault(key, []).append(float(value))

    def note(self, label: str, value: float) -> None:
        """Record an informative value (printed under the table, not in results.json)."""
        self.info.setdefault(label, []).append(float(value))

    def extend(self, key: str, values: Iterable[float]) -> None:
        """Record several runs of figure `key`."""
        for value in values:
            self.add(key, value)

    def summary(self, key: str) -> dict[str, Any] | None:
        """`{"median", "min", "max", "unit", "runs"}` of a figure, or None if it was not run."""
        values = self.samples.get(key)
        if not values:
            return None
        return {
            "median": round(statistics.median(values), 3),
            "min": round(min(values), 3),
            "max": round(max(values), 3),
            "unit": SPEC_BY_KEY[key].unit,
            "runs": len(values),
        }

    def to_json(self) -> dict[str, Any]:
        """Every measured figure, keyed by its id."""
        out: dict[str, Any] = {}
        for spec in SPECS:
            summary = self.summary(spec.key)
            if summary is not None:
                out[spec.key] = summary
        return out

    def write(self, path: Path) -> None:
        """Write results.json."""
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def misses(self) -> list[str]:
        """The keys whose median misses the target."""
        missed = []
        for spec in SPECS:
            summary = self.summary(spec.key)
            if summary is not None and summary["median"] > spec.target:
                missed.append(spec.key)
        return missed

    def table(self) -> str:
        """A plain-text table: median, min and max per figure beside the target."""
        head = ("id", "figure", "median", "min", "max", "target", "result")
        rows = [head]
        for spec in SPECS:
            summary = self.summary(spec.key)
            if summary is None:
                continue
            unit = spec.unit
            ok = "ok" if summary["median"] <= spec.target else "MISS"
            rows.append(
                (
                    spec.key,
                    spec.label,
                    _number(summary["median"], unit),
                    _number(summary["min"], unit),
                    _number(summary["max"], unit),
                    f"≤ {spec.target:g} {unit}",
                    f"{ok} (n={summary['runs']})",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        lines = [
            " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
        ]
        lines.insert(1, "-+-".join("-" * w for w in widths))
        for label, values in self.info.items():
            median = statistics.median(values)
            lines.append(
                f"  info: {label}: median {median:.1f}, min {min(values):.1f}, "
                f"max {max(values):.1f} (n={len(values)})"
            )
        return "\n".join(line.rstrip() for line in lines)


def _number(value: float, unit: str) -> str:
    if value >= 100:
        return f"{value:.0f} {unit}"
    if value >= 10:
        return f"{value:.1f} {unit}"
    return f"{value:.2f} {unit}"
