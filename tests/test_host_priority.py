"""The host's CPU priority follows its editor's autogroup nice (`priority`).

A real Neovim in a session at nice 3 is in tests/nvim/test_host.py; these use a stand-in for
/proc, with what a real kernel may not show: no autogroup at all, another nice than the host's.
"""

from __future__ import annotations

from pathlib import Path

from codecompanion.priority import autogroup_nice, follow_editor


def _proc(root: Path, **groups: str) -> Path:
    for pid, text in groups.items():
        (root / pid).mkdir()
        (root / pid / "autogroup").write_text(text)
    return root


def test_the_host_takes_the_editors_nice(tmp_path: Path) -> None:
    proc = _proc(tmp_path, self="/autogroup-9 nice 0\n", **{"42": "/autogroup-7 nice -5\n"})
    assert follow_editor(42, proc) == "set"
    assert (proc / "self" / "autogroup").read_text() == "-5"
    assert autogroup_nice(42, proc) == -5


def test_nothing_is_written_without_autogroups_or_a_difference(tmp_path: Path) -> None:
    assert follow_editor(42, tmp_path) == "same"
    assert not (tmp_path / "self").exists()
    proc = _proc(tmp_path, self="/autogroup-9 nice 2\n", **{"42": "/autogroup-7 nice 2\n"})
    assert follow_editor(42, proc) == "same"
    assert (proc / "self" / "autogroup").read_text() == "/autogroup-9 nice 2\n"
