"""What an edit's result says of the language servers' diagnostics: new problems (the changed
region first), those still there near the change, those it fixed, "no new problems", nothing
without a server, capped, late servers named; and what a read says of the file's problems."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codecompanion.after_edit.diagnostics import (
    DiagnosticsOptions,
    EditedFile,
    compare,
    current,
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


def test_problems_there_before_are_kept_apart_and_the_changed_region_comes_first() -> None:
    compared = compare(edited((UNUSED,), ((10, 11),)), [UNUSED, Y, Z])
    assert compared.new == [Z, Y] and compared.kept == [UNUSED] and compared.gone == []
    compared = compare(edited(None, ((10, 11),)), [UNUSED, Y, Z])
    assert compared.new == [Z, UNUSED, Y]  # unknown before: every problem is new
    assert compared.kept == [] and compared.gone == []


def test_a_problem_there_before_and_not_after_is_gone() -> None:
    compared = compare(edited((UNUSED, Y), ((3, 4),)), [UNUSED])
    assert compared.new == [] and compared.kept == [UNUSED] and compared.gone == [Y]


def test_an_identical_message_is_new_only_beyond_the_count_before() -> None:
    twice = Diagnostic(9, 0, "ERROR", "undefined name 'z'", "pyflakes")
    compared = compare(edited((Z,), ((10, 11),)), [Z, twice])
    assert len(compared.new) == 1 and len(compared.kept) == 1


async def test_the_report_names_each_new_problem_with_its_line_and_code() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [UNUSED, Y]})
    text = await report(editor, [edited((UNUSED,), ((8, 9),))], DiagnosticsOptions())
    assert text.splitlines() == [
        "Diagnostics for m.py after the edit (fake-lsp): 1 new problem (1 that were there "
        "before the edit, away from it, not shown), lines 1-based:",
        "m.py:4:12 ERROR pyflakes undefined name 'y'",
        "    > return y",
    ]


async def test_a_problem_still_there_near_the_change_and_one_it_fixed_are_named() -> None:
    renamed = Diagnostic(3, 11, "ERROR", "undefined name 'yy'", "pyflakes")
    editor = FakeEditor(diagnostic_map={"/p/m.py": [Z, renamed]})
    text = await report(editor, [edited((Y, Z), ((3, 4), (10, 11)))], DiagnosticsOptions())
    assert text.splitlines() == [
        "Diagnostics for m.py after the edit (fake-lsp): 1 new problem, lines 1-based:",
        "m.py:4:12 ERROR pyflakes undefined name 'yy'",
        "    > return y",
        "still there from before the edit: m.py:11:7 ERROR pyflakes undefined name 'z'",
        "    > print(z)",
        "fixed by the edit (was line 4): ERROR pyflakes undefined name 'y'",
    ]


async def test_no_new_problems_and_no_server() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [UNUSED]})
    text = await report(editor, [edited((UNUSED,), ((8, 9),))], DiagnosticsOptions())
    assert text == (
        "Diagnostics for m.py after the edit (fake-lsp): no new problems "
        "(1 that were there before the edit, away from it, not shown)."
    )
    fixed = await report(editor, [edited((UNUSED, Y), ((3, 4),))], DiagnosticsOptions())
    assert (
        fixed.splitlines()[-1]
        == "fixed by the edit (was line 4): ERROR pyflakes undefined name 'y'"
    )
    assert fixed.startswith("Diagnostics for m.py after the edit (fake-lsp): no new problems, ")
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


async def test_a_read_gets_the_problems_on_the_lines_it_reads() -> None:
    editor = FakeEditor(diagnostic_map={"/p/m.py": [Z, UNUSED, Y]})
    text = await current(editor, edited(None, ()), (0, 5), DiagnosticsOptions())
    assert text.splitlines() == [
        "Diagnostics for m.py now (fake-lsp): 2 problems (1 more on lines not read), "
        "lines 1-based:",
        "1:8 WARNING pyflakes 'os' imported but unused",
        "    > import os",
        "4:12 ERROR pyflakes undefined name 'y'",
        "    > return y",
    ]
    errors = DiagnosticsOptions(level="errors")
    assert await current(editor, edited(None, ()), (0, 2), errors) == (
        "Diagnostics for m.py now (fake-lsp): no problems on these lines (2 more on lines not "
        "read)."
    )
    assert await current(FakeEditor(), edited(None, ()), (0, 5), errors) == ""


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
