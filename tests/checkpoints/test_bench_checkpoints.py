"""bench/checkpoints.py runs and reports every figure (no timing is checked here)."""

from __future__ import annotations

from bench.checkpoints import capture_times, store_growth


def test_the_checkpoint_bench_reports_its_figures() -> None:
    capture = capture_times(60, runs=2)
    assert capture["files"] == 60 and capture["runs"] == 2
    assert 0 < capture["cpu_median_ms"] and 0 < capture["median_ms"] <= capture["max_ms"]
    growth = store_growth(files=40, turns=3)
    assert growth["turns"] == 3 and growth["growth_kb"] > 0 and growth["journal_kb"] > 0
