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
    expected = ["a1", "a2", "a3", "b1", "b2", "c_overhead", "c_latency", "sandbox_start"]
    expected += ["d_shown", "d_blocked", "e_nvim", "e_host", "f", "g", "mcp_stall"]
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
    assert (
        grep.time_tool(root, tmp_path / "data") > 0
        and grep.time_rg(root, str(shutil.which("rg"))) > 0
    )


def _run(plugin: str, scenario: str, probe: bool, **warm: float) -> dict[str, object]:
    return {"plugin": plugin, "scenario": scenario, "probe": probe, "warm": {"ok": True, **warm}}


def test_side_by_side_table_puts_both_plugins_of_one_run_with_ratio_and_verdict() -> None:
    from bench.sbs import table

    runs = [
        _run("cc", "b1", False, turn1_end_to_turn2_recv_ms=24.0),
        _run("cc", "b1", False, turn1_end_to_turn2_recv_ms=30.0),
        _run("ours", "b1", False, turn1_end_to_turn2_recv_ms=6.0),
        _run("cc", "c", False, turn1_end_to_turn2_recv_ms=2040.0),
        _run("ours", "c", False, turn1_end_to_turn2_recv_ms=2020.0),
        _run("ours", "a1k_paced", True, server_last_chunk_sent_to_rendered_ms=9.5),
    ]
    runs.append({"plugin": "ours", "scenario": "hist", "probe": False, "points": [
        {"prior_turns": 0, "submit_to_req1_recv_ms": 5.0, "ok": True},
        {"prior_turns": 400, "submit_to_req1_recv_ms": 12.0, "ok": False},
    ]})  # fmt: skip
    text = table({"runs": runs})
    assert (
        "| b1: 1 read_file, turn-1 end → turn-2 request | 27.0 ms | 6.0 ms | 4.5× | ≥ 3× ✓ |"
        in text
    )
    assert "| 40.0 ms | 20.0 ms | 2.0× | ≥ 2.5× ✗ |" in text  # the 2 s of sleep taken off
    assert "| — | 9.5 ms | — | ours ≤ 8 ms ✗ |" in text
    assert (
        "| 400 prior turns: submit → request at the server | — | 12.0 ms | — | ours ≤ 20 ms ✓ |"
        in text
    )
    assert "Every exchange correct: 7/8" in text


def test_side_by_side_without_the_harness_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bench import sbs

    monkeypatch.setenv("ANCHOR_DIR", str(tmp_path))
    assert sbs.harness_dir() is None
    (tmp_path / "bench.py").write_text("")
    assert sbs.harness_dir() == tmp_path


def test_loaded_table_has_its_own_ratio_targets_and_keeps_the_latency_bound() -> None:
    from bench.sbs import table

    runs = [
        _run("cc", "c", False, turn1_end_to_turn2_recv_ms=2040.0),
        _run("ours", "c", False, turn1_end_to_turn2_recv_ms=2020.0),
        _run("ours", "a10k_8c", True, probe_max_ms=17.0),
    ]
    text = table({"runs": runs}, loaded=True)
    assert "| 40.0 ms | 20.0 ms | 2.0× | ≥ 2× ✓ |" in text
    assert "| — | 17.0 ms | — | ours ≤ 16 ms ✗ |" in text


def test_cpu_hogs_are_busy_inside_the_block_and_gone_after_it() -> None:
    import os
    import time

    from bench.sbs import cpu_hogs

    def busy_children() -> set[int]:
        """Children of this process that are running or ready to run."""
        found = set()
        for entry in os.listdir("/proc"):
            try:
                stat = (Path("/proc") / entry / "stat").read_text() if entry.isdigit() else ""
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()
            if len(fields) > 1 and int(fields[1]) == os.getpid() and fields[0] == "R":
                found.add(int(entry))
        return found

    before = busy_children()
    with cpu_hogs(2):
        deadline = time.monotonic() + 10
        while len(during := busy_children() - before) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(during) == 2
    time.sleep(0.1)
    assert not (busy_children() & during)


def test_both_runs_make_one_table_with_each_loaded_row_below_its_quiet_row() -> None:
    from bench.sbs import heading, paired_table

    quiet = {"runs": [
        _run("cc", "b20", False, turn1_end_to_turn2_recv_ms=50.0),
        _run("ours", "b20", False, turn1_end_to_turn2_recv_ms=10.0),
    ]}  # fmt: skip
    loaded = {"runs": [
        _run("cc", "b20", False, turn1_end_to_turn2_recv_ms=90.0),
        _run("ours", "b20", False, turn1_end_to_turn2_recv_ms=40.0),
    ]}  # fmt: skip
    text = paired_table(quiet, loaded)
    assert (
        "| b20: 20 read_file calls, same | quiet | 50.0 ms | 10.0 ms | 5.0× | ≥ 4× ✓ |\n"
        "|  | loaded | 90.0 ms | 40.0 ms | 2.2× | ≥ 3× ✗ |"
    ) in text
    assert "Every exchange correct: 2/2 quiet, 2/2 loaded" in text
    loaded["meta"] = {"started": 0, "sbs": {
        "hogs": 2, "loadavg_before": [0.5, 0, 0], "loadavg_after": [2.25, 0, 0],
        "commit": "abc1234", "runs": 5, "machine": "a 2-core machine",
    }}  # fmt: skip
    line = heading(loaded, "loaded")
    assert line.startswith("loaded: one busy process per core (2 × `while True: pass`)")
    assert "1970-01-01 00:00 UTC, commit abc1234, load average 0.50 before and 2.25 after" in line
    assert line.endswith("a 2-core machine; n = 1 interleaved runs, medians")
