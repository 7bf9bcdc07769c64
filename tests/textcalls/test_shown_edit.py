"""An answer that calls nothing but shows a changed copy of a file read in this turn is read as
the `insert_edit_into_file` call it means: the replacements found (each widened until it matches
one place), none for a quote, an unread file, an elided copy or a label at a partial copy's
edge; in a chat, the call runs once per user message, asked about unless recovered calls run
unasked, and its result goes back to the model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.messages import Message
from codecompanion.textcalls.shown_edit import Replacement, ShownEdit, shown_edit
from codecompanion.tools import tool_registry
from tests.support.builder import built_chat
from tests.support.chat import RecordingView, chat_requests
from tests.support.fakes import ScriptedApprover

APP = "def main(total):\n    return totl\n\n\nprint(main(1))\n"
FIXED = "Replace it:\n```python\ndef main(total):\n    return total\n\n\nprint(main(1))\n```\n"
LONG = "def a(x):\n    return x\n\n\ndef b(x):\n    return x\n\n\ndef c(y):\n    return y + 1\n"


def read_of(path: str, text: str) -> str:
    n = len(text.splitlines())
    return f"{path}: lines 0-{n - 1} of {n} (0-based, inclusive)\n```py\n{text}```\n"


def turn_of(text: str = APP, path: str = "app.py", *extra: Message) -> list[Message]:
    return [
        Message(role="user", content="fix it"),
        Message(role="tool", content=read_of(path, text), tool_name="read_file", tool_call_id="r"),
        *extra,
    ]


def applied(text: str, found: ShownEdit | None) -> str:
    """`text` with the edits made as the edit tool makes them (each old text found once)."""
    assert found is not None
    for edit in found.edits:
        assert text.find(edit.old, text.find(edit.old) + 1) < 0 <= text.find(edit.old), edit
        text = text.replace(edit.old, edit.new)
    return text


def test_a_whole_changed_copy_is_one_replacement_of_the_files_lines() -> None:
    found = shown_edit(FIXED, turn_of())
    assert found == ShownEdit("app.py", (Replacement("    return totl", "    return total"),))
    assert found.arguments()["edits"] == [
        {"oldText": "    return totl", "newText": "    return total", "replaceAll": None}
    ]


def test_a_partial_copys_change_is_widened_until_it_matches_one_place() -> None:
    copy = "```py\ndef b(x):\n    return x * 2\n\n\ndef c(y):\n```"
    found = shown_edit(copy, turn_of(LONG, "m.py"))
    assert found is not None and found.path == "m.py"
    assert found.edits == (Replacement("def b(x):\n    return x", "def b(x):\n    return x * 2"),)
    assert applied(LONG, found) == LONG.replace("b(x):\n    return x", "b(x):\n    return x * 2")


def test_added_and_removed_lines_keep_the_line_before_them() -> None:
    added = "```py\ndef main(total):\n    total += 1\n    return totl\n\n\nprint(main(1))\n```"
    want = APP.replace("(total):\n", "(total):\n    total += 1\n")
    assert applied(APP, shown_edit(added, turn_of())) == want
    # Removed lines beside a changed one; a copy that only leaves lines out reads as a quote.
    removed = "```py\ndef a(x):\n    return x\n\n\ndef b(x):\n\n\ndef c(y):\n    return y + 2\n```"
    want = LONG.replace("def b(x):\n    return x", "def b(x):").replace("y + 1", "y + 2")
    assert applied(LONG, shown_edit(removed, turn_of(LONG))) == want
    excerpt = "```py\ndef a(x):\n    return x\n\n\ndef b(x):\n\n\ndef c(y):\n    return y + 1\n```"
    assert shown_edit(excerpt, turn_of(LONG)) is None


def test_blank_lines_and_trailing_spaces_are_not_changes() -> None:
    spaced = "```py\ndef main(total):   \n\n    return total\nprint(main(1))\n```"
    assert applied(APP, shown_edit(spaced, turn_of())) == APP.replace("totl", "total")


@pytest.mark.parametrize(
    "answer",
    [
        "The file:\n```py\ndef main(total):\n    return totl\n```",  # a quote: nothing changed
        "```py\nimport os\nprint(os.sep)\n```",  # another file's lines
        "```py\ndef main(total):\n```",  # one line: too little to tell
        "no block at all: return total",
    ],
)
def test_no_edit_is_read_from_a_quote_or_another_text(answer: str) -> None:
    assert shown_edit(answer, turn_of()) is None


def test_no_edit_without_a_read_in_this_turn() -> None:
    assert shown_edit(FIXED, [Message(role="user", content="fix it")]) is None
    later = [*turn_of(), Message(role="user", content="something else")]
    assert shown_edit(FIXED, later) is None
    failed = [
        Message(
            role="tool",
            content=read_of("app.py", APP),
            tool_name="read_file",
            tool_call_id="r",
            is_error=True,
        )
    ]
    assert shown_edit(FIXED, [Message(role="user", content="fix"), *failed]) is None


@pytest.mark.parametrize(
    "copy",
    [
        # Lines left out and marked so: replacing the file's lines by the marker would lose them.
        "```py\ndef a(x):\n    return x\n# ...\ndef c(y):\n    return y + 2\n```",
        "```py\ndef a(x):\n    return x\n// rest unchanged\ndef c(y):\n    return y + 2\n```",
        # A label above a partial copy is not the line of the file before it.
        "```py\n# m.py\ndef b(x):\n    return x * 2\n```",
    ],
)
def test_a_copy_that_cannot_be_read_as_edits_gives_none(copy: str) -> None:
    found = shown_edit(copy, turn_of(LONG, "m.py"))
    assert found is None or found.edits == ()


def test_many_changes_are_not_read() -> None:
    lines = [f"v{i} = {i}" for i in range(12)]
    text = "\n".join(lines) + "\n"
    changed = [f"v{i} = {i * 10 + 1}" if i % 3 == 0 else line for i, line in enumerate(lines)]
    found = shown_edit("```py\n" + "\n".join(changed) + "\n```", turn_of(text))
    assert found is not None and found.edits == ()  # four changes: the reminder's case


# The chat: the real builtins, chat and adapter against a scripted server.

READ_CALL = openai_tool_calls(
    [
        (
            "r1",
            "read_file",
            {
                "filepath": "app.py",
                "start_line_number_base_zero": 0,
                "end_line_number_base_zero": -1,
            },
        )
    ]
)


async def run_turn(
    server: LoopbackServer, cwd: Path, approver: ScriptedApprover, **extra: Any
) -> tuple[Chat, RecordingView]:
    """One turn of "@{files} fix app.py" in YOLO mode (the shown edit is asked about anyway
    unless `ask_recovered_calls=False`)."""
    settings = AdapterSettings(
        name="openai_compatible", url=server.url + "/v1", model="m", extra=dict(extra)
    )
    adapter = create_adapter(settings)
    view = RecordingView()
    chat = built_chat(
        adapter,
        tool_registry({}, {}, tool_opts={}),
        cwd,
        view,
        chat_id="s",
        approver=approver,
        opts={"timeout": 5},
        yolo=True,
    )
    try:
        assert chat.submit("@{files} fix app.py")
        assert chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat._task), 20)
    finally:
        await adapter.aclose()
    return chat, view


async def test_the_shown_change_runs_as_an_edit_after_the_user_approves_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(APP)
    approver = ScriptedApprover()
    with LoopbackServer() as server:
        server.enqueue(READ_CALL, openai_text(FIXED), openai_text("fixed"))
        chat, view = await run_turn(server, tmp_path, approver)
        bodies = chat_requests(server)
    assert (tmp_path / "app.py").read_text() == APP.replace("totl", "total")
    assert approver.prompts == ["Apply 1 edit to `app.py`?"]  # asked, YOLO or not
    answer, result = bodies[2]["messages"][-2:]
    assert answer["content"] == FIXED  # the answer as the model wrote it, then its call
    assert [c["function"]["name"] for c in answer["tool_calls"]] == ["insert_edit_into_file"]
    assert result["role"] == "tool" and result["tool_call_id"] == answer["tool_calls"][0]["id"]
    assert "app.py" in result["content"] and "failed" not in result["content"]
    assert "_[the answer shows `app.py` changed: read as an edit of it]_" in view.text()
    assert chat.messages.pending_calls() == []


async def test_a_rejected_change_leaves_the_file_and_is_not_read_again_in_the_turn(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(APP)
    approver = ScriptedApprover(default="reject")
    with LoopbackServer() as server:
        server.enqueue(READ_CALL, openai_text(FIXED), openai_text(FIXED), openai_text("never"))
        chat, _view = await run_turn(server, tmp_path, approver, ask_recovered_calls=True)
        bodies = chat_requests(server)
    assert (tmp_path / "app.py").read_text() == APP
    assert len(bodies) == 3  # the same copy again: the turn ends with it
    assert approver.prompts == ["Apply 1 edit to `app.py`?"]
    assert chat.messages.pending_calls() == []


async def test_without_recovering_text_calls_no_edit_is_read_only_the_reminder_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(APP)
    with LoopbackServer() as server:
        server.enqueue(READ_CALL, openai_text(FIXED), openai_text("ok"), openai_text("never"))
        await run_turn(server, tmp_path, ScriptedApprover(), recover_text_calls=False)
        bodies = chat_requests(server)
    assert len(bodies) == 3 and (tmp_path / "app.py").read_text() == APP
    reminder = bodies[2]["messages"][-1]
    assert reminder["role"] == "user"
    assert reminder["content"].startswith("Call insert_edit_into_file now: app.py is unchanged")


async def test_with_recovered_calls_unasked_the_shown_change_runs_as_yolo_lets_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(APP)
    approver = ScriptedApprover(default="reject")
    with LoopbackServer() as server:
        server.enqueue(READ_CALL, openai_text(FIXED), openai_text("fixed"))
        await run_turn(server, tmp_path, approver, ask_recovered_calls=False)
    assert approver.prompts == [] and (tmp_path / "app.py").read_text() == APP.replace(
        "totl", "total"
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["x = 1", "    return x", "", "def f():", "y = x", "# note"]),
        min_size=3,
        max_size=14,
    ),
    st.sets(st.integers(0, 13), min_size=1, max_size=3),
)
def test_the_edits_read_from_a_whole_copy_make_the_copy(lines: list[str], picks: set[int]) -> None:
    # Repeated lines included: each edit must still match one place, or none is read.
    text = "\n".join(lines) + "\n"
    changed = list(lines)
    for i in picks:
        if i < len(changed) and changed[i].strip():
            changed[i] = f"z{i} = {i}"
    found = shown_edit("```py\n" + "\n".join(changed) + "\n```", turn_of(text))
    if found is None or not found.edits:
        return
    assert applied(text, found) == "\n".join(changed) + "\n"


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 30), st.sets(st.integers(0, 29), min_size=1, max_size=3), st.data())
def test_a_whole_copy_of_distinct_lines_with_up_to_three_changes_is_always_read(
    size: int, picks: set[int], data: st.DataObject
) -> None:
    lines = [f"v{i} = {i}" for i in range(size)]
    changed = [f"w{i} = {i}" if i in picks else line for i, line in enumerate(lines)]
    if (
        changed == lines
        or sum(c != line for c, line in zip(changed, lines, strict=True)) * 2 > size
    ):
        return  # nothing changed, or more changed than kept: no copy
    cut = data.draw(st.integers(0, 1))  # the copy as a whole file, or cut after its last change
    shown = changed if not cut else changed[: max(picks & set(range(size))) + 2]
    text = "\n".join(lines) + "\n"
    found = shown_edit("```py\n" + "\n".join(shown) + "\n```", turn_of(text))
    assert found is not None and found.edits
    want = "\n".join(changed) + "\n"
    assert applied(text, found) == want
