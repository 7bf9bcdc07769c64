"""The bench package imports and its pure-Python scenarios run (no timing is checked here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench import SPECS, Results, grep, pure
from bench.turns import StampedChunks, answer_pieces, tool_call_turn


def test_pure_scenarios_run_once_and_report_every_field(tmp_path: Path) -> None:
    results = Results()
    pure.run(results, runs=1)
    out = tmp_path / "results.json"
    results.write(out)
    data = json.loads(out.read_text())
    assert set(data) == {"f", "g"}
    for key, unit in (("f", "ms"), ("g", "us")):
        assert data[key]["unit"] == unit and data[key]["runs"] == 1
        assert 0 < data[key]["min"] <= data[key]["median"] <= data[key]["max"]
    table = results.table()
    assert "fuzzy edit" in table and "parser" in table


def test_every_issue_figure_has_a_spec() -> None:
    keys = [spec.key for spec in SPECS]
    expected = ["a1", "a2", "a3", "b1", "b2", "c_overhead", "c_latency"]
    expected += ["d_shown", "d_blocked", "e_nvim", "e_host", "f", "g"]
    assert keys == expected


def test_scripted_answers_end_with_the_sentinel_and_stamp_the_tool_turn() -> None:
    pieces = answer_pieces(50, "SENTINEL")
    assert len(pieces) == 50 and pieces[-1].endswith("SENTINEL")
    assert "SENTINEL" not in "".join(pieces[:-1])
    turn, chunks = tool_call_turn([("c1", "read_file", {"filepath": "a.py"})])
    assert isinstance(turn.body_chunks, StampedChunks) and chunks.sent_at is None
    sent = [chunk for chunk in chunks]  # the server iterates like this; the end stamps the time
    assert b"read_file" in b"".join(sent) and chunks.sent_at is not None


@pytest.mark.skipif(shutil.which("rg") is None, reason="rg is not installed")
def test_grep_scenario_runs_on_a_small_tree(tmp_path: Path) -> None:
    root = grep.build_tree(tmp_path / "tree", files=200)
    assert grep.time_tool(root) > 0 and grep.time_rg(root, str(shutil.which("rg"))) > 0
