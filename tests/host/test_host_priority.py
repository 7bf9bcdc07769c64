"""The host's CPU priority follows its editor's autogroup nice (`priority`).

A real Neovim in a session at nice 3 is in tests/nvim/test_host.py; these use a stand-in for
/proc, with what a real kernel may not show: no autogroup at all, another nice than the host's.
"""

from __future__ import annotations

from pathlib import Path

from codecompanion.priority import HOST_NICE, autogroup_nice, follow_editor, host_offset


def _proc(root: Path, **groups: str) -> Path:
    for pid, text in groups.items():
        (root / pid).mkdir()
        (root / pid / "autogroup").write_text(text)
    return root


def test_the_host_takes_the_editors_nice(tmp_path: Path) -> None:
    proc = _proc(tmp_path, self="/autogroup-9 nice 0\n", **{"42": "/autogroup-7 nice -5\n"})
    assert follow_editor(42, proc=proc) == "set"
    assert (proc / "self" / "autogroup").read_text() == "-5"
    assert autogroup_nice(42, proc) == -5


def test_nothing_is_written_without_autogroups_or_a_difference(tmp_path: Path) -> None:
    assert follow_editor(42, proc=tmp_path) == "same"
    assert not (tmp_path / "self").exists()
    proc = _proc(tmp_path, self="/autogroup-9 nice 2\n", **{"42": "/autogroup-7 nice 2\n"})
    assert follow_editor(42, proc=proc) == "same"
    assert (proc / "self" / "autogroup").read_text() == "/autogroup-9 nice 2\n"


def test_the_host_steps_below_the_editor_and_never_past_nineteen(tmp_path: Path) -> None:
    proc = _proc(tmp_path, self="/autogroup-9 nice 0\n", **{"42": "/autogroup-7 nice -5\n"})
    assert follow_editor(42, 3, proc=proc) == "set"
    assert (proc / "self" / "autogroup").read_text() == "-2"
    (proc / "self" / "autogroup").write_text("/autogroup-9 nice -2\n")  # as the kernel shows it
    (proc / "42" / "autogroup").write_text("/autogroup-7 nice 18\n")
    assert follow_editor(42, 3, proc=proc) == "set"
    assert (proc / "self" / "autogroup").read_text() == "19"


def test_the_hosts_steps_come_from_setup_through_the_environment() -> None:
    assert HOST_NICE == 3
    assert host_offset({}) == HOST_NICE
    assert host_offset({"CODECOMPANION_HOST_NICE": "0"}) == 0
    assert host_offset({"CODECOMPANION_HOST_NICE": " 5 "}) == 5
    assert host_offset({"CODECOMPANION_HOST_NICE": "40"}) == 19
    assert host_offset({"CODECOMPANION_HOST_NICE": "-4"}) == 0
    assert host_offset({"CODECOMPANION_HOST_NICE": "fast"}) == HOST_NICE
