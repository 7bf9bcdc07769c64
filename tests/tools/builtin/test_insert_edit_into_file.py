"""insert_edit_into_file: matching, atomicity, modes, review, buffers, disk safety."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from codecompanion.ports import HunkDecision, UnsavedChoice
from codecompanion.tools.builtin import insert_edit_into_file as tool
from tests.support.builtin import FakeTools, prompt, run_tool
from tests.support.fakes import FakeEditor

SOURCE = """def first():
    value = 1
    return value


def second():
    value = 2
    return value
"""


def _edit(old: str, new: str, replace_all: bool | None = None) -> dict[str, Any]:
    return {"oldText": old, "newText": new, "replaceAll": replace_all}


def _args(edits: Any, mode: str | None = None, path: str = "code.py") -> dict[str, Any]:
    return {"filepath": path, "edits": edits, "explanation": "Tweak values", "mode": mode}


@pytest.fixture
def code(project: Path) -> Path:
    path = project / "code.py"
    path.write_text(SOURCE)
    return path


async def test_exact_edit_on_disk(tools: FakeTools, code: Path) -> None:
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success", out.for_llm
    assert code.read_text() == SOURCE.replace("value = 1", "value = 10")
    assert "Edited code.py on disk." in out.for_llm
    assert "- edit 1: exact match at line 2" in out.for_llm
    assert out.for_user == "Edited `code.py`: Tweak values"


async def test_ambiguous_match_is_an_error_listing_lines(tools: FakeTools, code: Path) -> None:
    out = await run_tool(tool, _args([_edit("    return value", "    return 0")]), tools)
    assert out.status == "error"
    assert "matches 2 places" in out.for_llm
    assert "lines 3, 8" in out.for_llm
    assert code.read_text() == SOURCE


async def test_no_match_quotes_closest_text(tools: FakeTools, code: Path) -> None:
    edit = _edit("def second():\n    value = 3\n    return valeu\n    pass", "x")
    out = await run_tool(tool, _args([edit]), tools)
    assert out.status == "error"
    assert "not found" in out.for_llm
    assert "6: def second():" in out.for_llm
    assert code.read_text() == SOURCE


async def test_replace_all(tools: FakeTools, code: Path) -> None:
    out = await run_tool(tool, _args([_edit("value", "result", True)]), tools)
    assert out.status == "success"
    assert code.read_text() == SOURCE.replace("value", "result")
    assert "4 places (lines 2, 3, 7, 8)" in out.for_llm


async def test_edits_apply_in_order_and_atomically(tools: FakeTools, code: Path) -> None:
    edits = [_edit("value = 1", "value = 10"), _edit("missing text here", "x")]
    out = await run_tool(tool, _args(edits), tools)
    assert out.status == "error"
    assert "Edit 2 of 2" in out.for_llm
    assert code.read_text() == SOURCE
    edits = [_edit("value = 1", "value = 10"), _edit("value = 10", "value = 11")]
    out = await run_tool(tool, _args(edits), tools)
    assert out.status == "success"
    assert "value = 11" in code.read_text()


async def test_edits_as_json_string_and_broken_json(tools: FakeTools, code: Path) -> None:
    text = json.dumps([_edit("value = 1", "value = 5")])
    out = await run_tool(tool, _args(text), tools)
    assert out.status == "success"
    broken = '[{"oldText": "value = 2", "newText": "value = 6"'
    out = await run_tool(tool, _args(broken), tools)
    assert out.status == "success", out.for_llm
    assert "value = 5" in code.read_text() and "value = 6" in code.read_text()


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        (None, "non-empty list"),
        ([], "non-empty list"),
        ("not json at all", "not valid JSON"),
        ([{"oldText": "a"}], "edits[0].newText is missing"),
        ([{"newText": "a"}], "edits[0].oldText is missing"),
        ([{"oldText": "a", "newText": "b", "replaceAll": "yes"}], "replaceAll must be"),
        (["text"], "edits[0] must be an object"),
        ([_edit("value = 1", "value = 1")], "changes nothing"),
        ([_edit("", "x")], "oldText is empty"),
    ],
)
async def test_argument_errors(tools: FakeTools, code: Path, edits: Any, message: str) -> None:
    out = await run_tool(tool, _args(edits), tools)
    assert out.status == "error"
    assert message in out.for_llm
    assert code.read_text() == SOURCE


async def test_bad_mode_and_missing_file(tools: FakeTools, code: Path) -> None:
    out = await run_tool(tool, _args([_edit("a", "b")], mode="sideways"), tools)
    assert 'mode must be null, "append" or "overwrite"' in out.for_llm
    out = await run_tool(tool, _args([_edit("a", "b")], path="nope.py"), tools)
    assert "No such file or directory: nope.py" in out.for_llm


async def test_overwrite_replaces_the_file(tools: FakeTools, code: Path) -> None:
    out = await run_tool(tool, _args([{"newText": "fresh\n"}], mode="overwrite"), tools)
    assert out.status == "success"
    assert code.read_text() == "fresh\n"
    assert "Overwrote code.py on disk." in out.for_llm


async def test_an_overwrite_naming_a_part_of_the_file_applies_the_edit(
    tools: FakeTools, project: Path
) -> None:
    # As a 1.5B model writes a one-line fix: "overwrite" with the line as oldText. Overwriting
    # would leave the file holding that line alone.
    (project / "n.txt").write_text("alpha\nbeta\ngamma\n")
    out = await run_tool(
        tool, _args([_edit("beta", "BETA")], mode="overwrite", path="n.txt"), tools
    )
    assert out.status == "success", out.for_llm
    assert (project / "n.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert 'mode "overwrite" was read as null: oldText is a part of the file' in out.for_llm
    whole = _edit("alpha\nBETA\ngamma\n", "new\n")  # the whole text named: an overwrite
    out = await run_tool(tool, _args([whole], mode="overwrite", path="n.txt"), tools)
    assert (project / "n.txt").read_text() == "new\n" and "Overwrote n.txt" in out.for_llm
    out = await run_tool(tool, _args([_edit("", "newer\n")], mode="overwrite", path="n.txt"), tools)
    assert (project / "n.txt").read_text() == "newer\n" and "Overwrote n.txt" in out.for_llm


async def test_append_mode_applies_the_edits_as_codecompanion_does(
    tools: FakeTools, project: Path
) -> None:
    (project / "n.txt").write_text("alpha\nbeta\ngamma\n")
    edit = _edit("beta", "BETA")
    out = await run_tool(tool, _args([edit], mode="append", path="n.txt"), tools)
    assert out.status == "success", out.for_llm
    assert (project / "n.txt").read_text() == "alpha\nBETA\ngamma\n"


async def test_start_and_end_markers_insert_at_the_edges(tools: FakeTools, project: Path) -> None:
    (project / "m.py").write_text("body\n")
    edits = [_edit("^", "#!/usr/bin/env python3\n"), _edit("$", "# footer\n")]
    out = await run_tool(tool, _args(edits, path="m.py"), tools)
    assert out.status == "success", out.for_llm
    assert (project / "m.py").read_text() == "#!/usr/bin/env python3\nbody\n# footer\n"
    out = await run_tool(tool, _args([_edit("<<END>>", "end\n")], path="m.py"), tools)
    assert (project / "m.py").read_text().endswith("# footer\nend\n")


async def test_empty_file_takes_new_text(tools: FakeTools, project: Path) -> None:
    (project / "e.txt").write_text("")
    out = await run_tool(tool, _args([_edit("", "hello\n")], path="e.txt"), tools)
    assert out.status == "success"
    assert (project / "e.txt").read_text() == "hello\n"


async def test_preserves_mode_crlf_and_missing_final_newline(
    tools: FakeTools, project: Path
) -> None:
    path = project / "run.sh"
    path.write_bytes(b"#!/bin/sh\r\necho one\r\necho two")
    os.chmod(path, 0o751)
    out = await run_tool(tool, _args([_edit("echo one", "echo 1")], path="run.sh"), tools)
    assert out.status == "success"
    assert path.read_bytes() == b"#!/bin/sh\r\necho 1\r\necho two"
    assert path.stat().st_mode & 0o777 == 0o751
    assert not [p for p in project.iterdir() if p.name.endswith(".tmp")]


async def test_indentation_insensitive_match_reindents(tools: FakeTools, code: Path) -> None:
    old = "def second():\n  value = 2\n  return value"
    new = "def second():\n  value = 20\n  return value"
    out = await run_tool(tool, _args([_edit(old, new)]), tools)
    assert out.status == "success"
    assert "def second():\n    value = 20\n    return value\n" in code.read_text()
    assert "indentation-insensitive match" in out.for_llm
    assert "Applied diff" in out.for_llm


async def test_refuses_when_file_changed_on_disk_and_the_edit_no_longer_applies(
    project: Path, code: Path
) -> None:
    editor = FakeEditor(on_review=lambda: code.write_text("changed by someone\n"))
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "error"
    assert "changed during the review and the edits no longer apply" in out.for_llm
    assert code.read_text() == "changed by someone\n"


async def test_loaded_modified_buffer_is_edited_not_saved(project: Path, code: Path) -> None:
    lines = SOURCE.splitlines()
    lines[6] = "    value = 222  # unsaved change by the user"
    editor = FakeEditor(buffers={str(code): lines}, modified={str(code)})
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success", out.for_llm
    assert "not saved to disk (the user has unsaved changes there)" in out.for_llm
    assert editor.unsaved_asked == [str(code)] and editor.saved == []
    buffer = editor.buffers[str(code)]
    assert buffer[1] == "    value = 10"
    assert buffer[6] == "    value = 222  # unsaved change by the user"
    assert code.read_text() == SOURCE


async def test_an_unmodified_buffer_is_edited_and_saved_without_a_question(
    project: Path, code: Path
) -> None:
    editor = FakeEditor(buffers={str(code): SOURCE.splitlines()})
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success", out.for_llm
    assert "on disk (through its buffer open in Neovim)" in out.for_llm
    assert editor.saved == [str(code)] and editor.unsaved_asked == []


@pytest.mark.parametrize("answer", ["save", "reject"])
async def test_the_user_decides_about_their_unsaved_buffer(
    project: Path, code: Path, answer: UnsavedChoice
) -> None:
    lines = SOURCE.splitlines()
    lines[6] = "    value = 222  # unsaved change by the user"
    editor = FakeEditor(buffers={str(code): lines}, modified={str(code)}, unsaved_answers=[answer])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    buffer = editor.buffers[str(code)]
    assert buffer[6] == "    value = 222  # unsaved change by the user"  # the user's text kept
    if answer == "save":
        assert out.status == "success" and editor.saved == [str(code)]
        assert buffer[1] == "    value = 10"
    else:
        assert out.status == "error" and "rejected the edit" in out.for_llm
        assert buffer[1] == "    value = 1" and editor.writes == []


async def test_in_edits_mode_an_unsaved_buffer_is_edited_without_a_question(
    project: Path, code: Path
) -> None:
    editor = FakeEditor(buffers={str(code): SOURCE.splitlines()}, modified={str(code)})
    tools = FakeTools(cwd=project, editor=editor, mode="edits")
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success" and "not saved to disk" in out.for_llm
    assert editor.unsaved_asked == [] and editor.saved == []


async def test_typing_during_the_review_asks_again_and_keeps_what_was_typed(
    project: Path, code: Path
) -> None:
    editor = FakeEditor(buffers={str(code): SOURCE.splitlines()})
    typed: list[bool] = []

    def type_once() -> None:
        if not typed:
            typed.append(True)
            editor.buffers[str(code)].append("typed meanwhile")

    editor.on_review = type_once
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success", out.for_llm
    assert len(editor.reviews) == 2 and editor.notes[0] is None
    assert "changed while you reviewed" in (editor.notes[1] or "")
    assert editor.reviews[1][1][-1] == "typed meanwhile"  # the second diff is against it
    buffer = editor.buffers[str(code)]
    assert buffer[1] == "    value = 10" and buffer[-1] == "typed meanwhile"
    assert code.read_text() == SOURCE


async def test_opening_the_file_during_the_review_edits_the_buffer_not_the_disk(
    project: Path, code: Path
) -> None:
    editor = FakeEditor()
    # The user opens the file while its review is open (read from disk): buffer and disk would
    # diverge if the edit went to the disk.
    editor.on_review = lambda: editor.buffers.setdefault(str(code), SOURCE.splitlines())
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "success", out.for_llm
    assert len(editor.reviews) == 2
    assert editor.buffers[str(code)][1] == "    value = 10"
    assert code.read_text() == SOURCE


async def test_a_file_that_changes_under_every_review_is_refused(project: Path, code: Path) -> None:
    editor = FakeEditor(buffers={str(code): SOURCE.splitlines()})
    editor.on_review = lambda: editor.buffers[str(code)].append("typed meanwhile")
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "error"
    assert "kept changing during the review" in out.for_llm
    assert editor.writes == [] and len(editor.reviews) == 3


async def test_partial_hunk_acceptance(project: Path, code: Path) -> None:
    editor = FakeEditor(decisions=[HunkDecision(accepted=(1,), rejected=(0,), reason="keep 1")])
    tools = FakeTools(cwd=project, editor=editor)
    edits = [_edit("value = 1", "value = 10"), _edit("value = 2", "value = 20")]
    out = await run_tool(tool, _args(edits), tools)
    assert out.status == "success"
    assert code.read_text() == SOURCE.replace("value = 2", "value = 20")
    assert "rejected 1 of 2 changes (line 2 (-1 +1))" in out.for_llm
    assert '"keep 1"' in out.for_llm


async def test_everything_rejected(project: Path, code: Path) -> None:
    editor = FakeEditor(decisions=["reject"])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools)
    assert out.status == "error"
    assert "rejected the changes to code.py; nothing was written" in out.for_llm
    assert code.read_text() == SOURCE


async def test_review_skipped_when_approved(project: Path, code: Path) -> None:
    editor = FakeEditor(decisions=["reject"])
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(tool, _args([_edit("value = 1", "value = 10")]), tools, approved=True)
    assert out.status == "success"
    assert editor.reviews == []


async def test_path_escapes(tools: FakeTools, project: Path) -> None:
    outside = project.parent / "other.py"
    outside.write_text("x = 1\n")
    for path in ("../other.py", str(outside)):
        out = await run_tool(tool, _args([_edit("x = 1", "x = 2")], path=path), tools)
        assert out.status == "error"
        assert "outside the project" in out.for_llm
    os.symlink(outside, project / "alias.py")
    out = await run_tool(tool, _args([_edit("x = 1", "x = 2")], path="alias.py"), tools)
    assert out.status == "error"
    assert outside.read_text() == "x = 1\n"


def test_prompt(tools: FakeTools) -> None:

    args = _args([_edit("a", "b"), _edit("c", "d")])
    assert prompt(tool, args, tools) == "Apply 2 edits to `code.py`?"


async def test_big_file_fuzzy_edit(tools: FakeTools, project: Path) -> None:
    pick = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta"]
    lines = []
    for i in range(10_000):
        a, b, c, d = (pick.choice(words) for _ in range(4))
        lines.append(f"def {a}_{b}_{i}(event):\n    return {c}.process(event, {d}={i})\n")
    path = project / "big.py"
    path.write_text("".join(lines))
    target = lines[7777].split("\n")
    old = target[0] + "\n" + target[1].replace("process", "proces")
    new = target[0] + "\n    return None"
    out = await run_tool(tool, _args([_edit(old, new)], path="big.py"), tools)
    assert out.status == "success", out.for_llm
    assert "fuzzy match" in out.for_llm
    text = path.read_text()
    assert new + "\n" in text
    assert text.count("\n") == 20_000
