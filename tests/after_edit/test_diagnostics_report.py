"""What an edit's result says of the language servers' diagnostics: new problems only (the
changed region first), "no new problems", nothing without a server, capped, late servers named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codecompanion.after_edit.diagnostics import (
    DiagnosticsOptions,
    EditedFile,
    new_problems,
    report,
)
from codecompanion.ports import Diagnostic, FreshDiagnostics
from tests.support.fakes import FakeEditor

LINES = ["import os", "", "def f():", "    return y", "", "", "", "", "", "", "print(z)"]
UNUSED = Diagnostic(0, 7, "WARNING", "'os' imported but unused", "pyflakes")
Y = Diagnostic(3, 11, "ERROR", "undefined name 'y'", "pyflakes")
Z = Diagnostic(10, 6, "ERROR", "undefined name 'z'", "pyflakes")


def edited(
    before: tuple[Diagnostic, ...] | None, changed: tuple[tuple[int, int], ...]
) -> EditedFile:
    return EditedFile(Path("/p/m.py"), "m.py", LINES, changed, before)


def test_problems_there_before_are_left_out_and_the_changed_region_comes_first() -> None:
    fresh, old = new_problems(edited((UNUSED,), ((10, 11),)), [UNUSED, Y, Z])
    assert fresh == [Z, Y] and old == 1
    fresh, old = new_problems(edited(None, ((10, 11),)), [UNUSED, Y, Z])
    assert fresh == [Z, UNUSED, Y] and old == 0  # unknown before: every problem is shown


def test_an_identical_message_is_new_only_beyond_the_count_before() -> None:
    twice = Diagnostic(9, 0, "ERROR", "undefined name 'z'", "pyflakes")
    fresh, old = new_problems(edited((Z,), ((10, 11),)), [Z, twice])
    assert len(fresh) == 1 and old == 1


async def test_the_report_names_each_new_problem_with_its_line_and_code() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [UNUSED, Y]})
    text = await report(editor, [edited((UNUSED,), ((3, 4),))], DiagnosticsOptions())
    assert text.splitlines() == [
        "Diagnostics for m.py after the edit (fake-lsp): 1 new problem (1 that were there "
        "before the edit not shown), lines 1-based:",
        "m.py:4:12 ERROR pyflakes undefined name 'y'",
        "    > return y",
    ]


async def test_no_new_problems_and_no_server() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [UNUSED]})
    text = await report(editor, [edited((UNUSED,), ((3, 4),))], DiagnosticsOptions())
    assert text == (
        "Diagnostics for m.py after the edit (fake-lsp): no new problems "
        "(1 that were there before the edit not shown)."
    )
    assert await report(FakeEditor(), [edited(None, ())], DiagnosticsOptions()) == ""
    assert await report(None, [edited(None, ())], DiagnosticsOptions()) == ""
    off = DiagnosticsOptions.from_opts({"editor": {"diagnostics": False}})
    assert await report(editor, [edited(None, ())], off) == ""


async def test_errors_only_and_a_cap() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [UNUSED, Y, Z]})
    options = DiagnosticsOptions.from_opts(
        {"editor": {"diagnostics": "errors", "max_diagnostics": 1}}
    )
    text = await report(editor, [edited((), ((3, 4),))], options)
    assert editor.diagnostic_calls == [("/p/m.py", "ERROR")]
    assert "2 new problems" in text and "m.py:4:12" in text and "(1 more not shown)" in text
    assert "WARNING" not in text  # filtered even when an editor gives more than asked


@dataclass
class LateEditor(FakeEditor):
    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        return FreshDiagnostics((Y,), ("pylsp",), fresh=False, timed_out=True)


async def test_a_server_that_did_not_publish_in_time_is_named() -> None:
    text = await report(LateEditor(), [edited((), ((3, 4),))], DiagnosticsOptions(wait=1.5))
    assert "(pylsp; pylsp did not publish within 1.5 s, so these may be from before)" in text


def test_options_fall_back_on_bad_values() -> None:
    options = DiagnosticsOptions.from_opts({"editor": {"diagnostics_wait": -1, "diagnostics": "x"}})
    assert options == DiagnosticsOptions()
    assert DiagnosticsOptions.from_opts({"editor": {"diagnostics_wait": 0}}).wait == 0
