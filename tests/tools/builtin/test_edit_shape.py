"""Loose matches: newText re-indented only when written in oldText's indentation, and a unique
match that differs only in punctuation applied with a note of what differed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codecompanion.tools.builtin import insert_edit_into_file as tool
from codecompanion.tools.builtin._support.edit_match import EditError, locate
from codecompanion.tools.builtin._support.edits import Edit, apply_edits
from tests.support.builtin import FakeTools, run_tool

FOUR = """class Store:
    def second(self):
        value = 2
        if value:
            return value
        return 0
"""


def edit(content: str, old: str, new: str, replace_all: bool = False) -> tuple[str, str]:
    result = apply_edits(content, [Edit(old, new, replace_all)])
    (applied,) = result.applied
    return result.content, applied.describe()


# -- 1. indentation ----------------------------------------------------------------------------

TOP = """def second():
    value = 2
    return value
"""
OLD_TWO = "def second():\n  value = 2\n  return value"


def test_new_text_already_in_the_files_indentation_is_kept() -> None:
    # The case: the file indents by 4, oldText by 2, newText is already written with 4.
    new = "def second():\n    value = 20\n    return value"
    content, said = edit(TOP, OLD_TWO, new)
    assert content == TOP.replace("value = 2\n", "value = 20\n")
    assert "indentation-insensitive match" in said
    assert "kept as written: it already uses the file's indentation" in said


def test_new_text_in_old_texts_indentation_is_reindented() -> None:
    new = "def second():\n  value = 20\n  return value"
    content, said = edit(TOP, OLD_TWO, new)
    assert content == TOP.replace("value = 2\n", "value = 20\n")
    assert "re-indented from oldText's indentation to the file's" in said


OLD_NESTED = "def second(self):\n  value = 2\n  if value:\n    return value"


@pytest.mark.parametrize(
    ("new", "how"),
    [
        ("def second(self):\n  value = 20\n  if value:\n    return value", "re-indented"),
        ("def second(self):\n    value = 20\n    if value:\n        return value", "shifted"),
        (
            "    def second(self):\n        value = 20\n"
            "        if value:\n            return value",
            "kept as written",
        ),
    ],
)
def test_nested_old_text_inside_a_class(new: str, how: str) -> None:
    content, said = edit(FOUR, OLD_NESTED, new)
    assert content == FOUR.replace("value = 2\n", "value = 20\n")
    assert how in said


def test_all_new_lines_in_the_files_indentation_are_kept() -> None:
    new = "def second(self):\n    return 20"  # no line but the first is copied from oldText
    content, _ = edit(FOUR, OLD_NESTED, new)
    assert "    def second(self):\n        return 20\n        return 0\n" in content


def test_a_new_nested_block_in_old_texts_indentation_is_reindented() -> None:
    old = "  value = 2\n  if value:"
    new = "  value = compute()\n  while value:\n    value -= 1\n  if value:"
    content, said = edit(FOUR, old, new)
    assert (
        "        value = compute()\n        while value:\n"
        "            value -= 1\n        if value:\n" in content
    )
    assert "re-indented" in said


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        ("    def second(self):\n        return 1", "    def second(self):\n        return 1\n"),
        ("def second(self):\n    return 1", "    def second(self):\n        return 1\n"),
    ],
)
def test_flush_left_old_text_inside_a_class(new: str, expected: str) -> None:
    old = "def second(self):\n    value = 2"
    content, _ = edit(FOUR, old, new)
    assert content.startswith("class Store:\n" + expected)


@pytest.mark.parametrize(
    ("new", "how"),
    [
        ("def f():\n\treturn 2", "kept as written"),
        ("def f():\n    return 2", "re-indented"),
    ],
)
def test_tabs_in_the_file_spaces_in_old_text(new: str, how: str) -> None:
    content, said = edit("def f():\n\treturn 1\n", "def f():\n    return 1", new)
    assert content == "def f():\n\treturn 2\n"
    assert how in said


def test_same_indentation_says_nothing_about_it() -> None:
    content, said = edit(FOUR, "        value  =  2", "        value = 3")
    assert "value = 3" in content
    assert "indent" not in said


async def test_the_tool_result_says_which(tools: FakeTools, project: Path) -> None:
    path = project / "store.py"
    path.write_text(TOP)
    new = "def second():\n    value = 20\n    return value"
    args = {"filepath": "store.py", "edits": [{"oldText": OLD_TWO, "newText": new}]}
    out = await run_tool(tool, {**args, "explanation": "x", "mode": None}, tools)
    assert out.status == "success"
    assert path.read_text() == TOP.replace("value = 2\n", "value = 20\n")
    assert "it already uses the file's indentation" in str(out.for_llm)
    assert "Applied diff" in str(out.for_llm)


# -- 2. punctuation ----------------------------------------------------------------------------

JS = """const config = {
  name: "app",
  retries: 3,
  verbose: false,
};

function start(options) {
  connect(options.host, options.port);
  return true;
};
"""


def test_a_missing_trailing_comma_is_applied_with_a_note() -> None:
    old = 'const config = {\n  name: "app",\n  retries: 3\n  verbose: false,\n};'
    new = 'const config = {\n  name: "app",\n  retries: 3\n  verbose: true,\n};'
    content, said = edit(JS, old, new)
    # The line newText copied unchanged keeps the file's comma; the changed line is newText's.
    assert content == JS.replace("verbose: false", "verbose: true")
    assert "punctuation-normalised match (9" in said
    assert "line 3: the file has `retries: 3,` where oldText has `retries: 3`" in said
    assert "1 line newText copied from oldText kept the file's text" in said


def test_brace_without_semicolon_is_applied() -> None:
    old = "  verbose: false,\n}\n\nfunction start(options) {"
    new = "  verbose: false,\n}\n\nfunction start(options, retry) {"
    content, said = edit(JS, old, new)
    assert content == JS.replace("start(options)", "start(options, retry)")
    assert "line 5: the file has `};` where oldText has `}`" in said


def test_spacing_and_punctuation_together() -> None:
    (match,) = locate(JS, "function start( options ) {\n  connect(options.host,options.port)")
    assert (match.strategy, match.line) == ("punctuation-normalised", 7)
    assert match.score >= 0.9


def test_ambiguous_punctuation_matches_still_refuse_with_the_places() -> None:
    block = "if (ready) {\n  launch(rocket);\n};\n"
    with pytest.raises(EditError, match=r"matches 2 places \(punctuation-normalised match\)"):
        locate(block + "\n" + block, "if (ready) {\n  launch(rocket)\n}")


def test_a_low_score_still_refuses_with_the_closest_text() -> None:
    with pytest.raises(EditError) as caught:
        locate("x;\n};\n", "x\n}")
    assert "not found" in str(caught.value) and "Closest" in str(caught.value)


@pytest.mark.parametrize(
    "old",
    [
        "  connect(options.host - options.port);",  # an operator is not punctuation here
        "  connect(options.hostname, options.port);",
        "  connect(options.host, options.port);;\n  return truth;",
    ],
)
def test_other_differences_are_not_punctuation(old: str) -> None:
    try:
        matches = locate(JS, old)
    except EditError:
        return
    assert all(m.strategy != "punctuation-normalised" for m in matches)


def test_replace_all_with_punctuation_differences() -> None:
    content = "logger.info(value_a),\nother()\nlogger.info(value_a),\n"
    old, new = "logger.info(value_a);", "logger.warn(value_a);"
    result, said = edit(content, old, new, replace_all=True)
    assert result == "logger.warn(value_a);\nother()\nlogger.warn(value_a);\n"
    assert "punctuation-normalised match (95% similar) at 2 places (lines 1, 3)" in said
    assert "line 1: the file has `logger.info(value_a),`" in said


def _shape(*lines: Any) -> str:
    return "\n".join(lines)


async def test_the_tool_applies_it_and_tells_the_model(tools: FakeTools, project: Path) -> None:
    path = project / "config.js"
    path.write_text(JS)
    old = _shape("  retries: 3", "  verbose: false")
    new = _shape("  retries: 5", "  verbose: false")
    args = {"filepath": "config.js", "edits": [{"oldText": old, "newText": new}]}
    out = await run_tool(tool, {**args, "explanation": "x", "mode": None}, tools)
    assert out.status == "success"
    assert path.read_text() == JS.replace("retries: 3,", "retries: 5")
    text = str(out.for_llm)
    assert "punctuation-normalised match" in text
    assert "the file has `verbose: false,` where oldText has `verbose: false`" in text
    assert "Applied diff" in text
