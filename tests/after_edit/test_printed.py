"""An answer that shows a changed copy of a file read in this turn, calling nothing: the model is
asked once to make the edit, with the loop on and the edit tool offered; not for a plain quote,
a file not read, or a second time."""

from __future__ import annotations

from codecompanion.after_edit.printed import ask_to_edit, changed_copy
from codecompanion.messages import Message

READ = (
    "app.py: lines 0-2 of 3 (0-based, inclusive)\n```py\ndef main(total):\n"
    "    return totl\n\nprint(main(1))\n```\nDiagnostics for app.py now (pylsp): 1 problem"
)
FIXED = "Replace it:\n```python\ndef main(total):\n    return total\n\nprint(main(1))\n```\n"
QUOTED = "The file:\n```py\ndef main(total):\n    return totl\n```\n"
OPTS = {"editor": {"diagnostics": "problems"}}
TOOLS = ["read_file", "insert_edit_into_file"]


def turn(*extra: Message) -> list[Message]:
    return [
        Message(role="user", content="fix app.py"),
        Message(role="tool", content=READ, tool_name="read_file", tool_call_id="r1"),
        *extra,
    ]


def test_a_changed_copy_of_a_file_read_is_found() -> None:
    edit = {"oldText": "    return totl", "newText": "    return total"}
    assert changed_copy(FIXED, turn()) == ("app.py", [edit])
    assert changed_copy(QUOTED, turn()) is None  # the lines as they are: nothing to edit
    assert changed_copy("```py\nimport os\nprint(os.sep)\n```", turn()) is None
    unread = [Message(role="user", content="fix app.py")]
    assert changed_copy(FIXED, unread) is None
    earlier = [*turn(), Message(role="user", content="something else")]
    assert changed_copy(FIXED, earlier) is None  # a read of an earlier turn does not count


def test_the_model_is_asked_once_with_the_loop_on_and_the_edit_tool_offered() -> None:
    ask = ask_to_edit(FIXED, turn(), TOOLS, OPTS)
    assert ask == (
        "Call insert_edit_into_file now: app.py is unchanged: your answer only showed the "
        "change. The change your answer shows, as the call's arguments: "
        '{"filepath": "app.py", "edits": [{"oldText": "    return totl", "newText": '
        '"    return total"}]} If the user asked for no change, answer the user instead.'
    )
    again = turn(Message(role="user", content=ask, visible=False))
    assert ask_to_edit(FIXED, again, TOOLS, OPTS) is None
    assert ask_to_edit(FIXED, turn(), ["read_file"], OPTS) is None
    off = {"editor": {"diagnostics": False}}
    assert ask_to_edit(FIXED, turn(), TOOLS, off) is None


def test_a_change_that_only_adds_lines_is_asked_for_in_words() -> None:
    added = "```py\nimport sys\ndef main(total):\n    return totl\n\nprint(main(1))\n```"
    ask = ask_to_edit(added, turn(), TOOLS, OPTS)
    assert ask is not None and "Call it with oldText: the lines as they are in app.py" in ask
