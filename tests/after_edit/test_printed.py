"""The reminder for an answer that shows a changed copy of a file read in this turn and calls
nothing, when no edit was read from it: the model is asked once to make the edit, with the loop
on and the edit tool offered; not for a plain quote, a file not read, a second time, or after
the copy's change went to the user as an edit."""

from __future__ import annotations

from codecompanion.after_edit.printed import ask_to_edit
from codecompanion.messages import Message, ToolCall
from codecompanion.textcalls.prompt import TEXT_CALLS
from codecompanion.textcalls.shown_edit import SHOWN_EDIT

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


def test_the_model_is_asked_once_with_the_loop_on_and_the_edit_tool_offered() -> None:
    ask = ask_to_edit(FIXED, turn(), TOOLS, OPTS)
    assert ask == (
        "Call insert_edit_into_file now: app.py is unchanged: your answer only showed the "
        "change. Call it with oldText: the lines as they are in app.py, newText: them changed. "
        "If the user asked for no change, answer the user instead."
    )
    again = turn(Message(role="user", content=ask, visible=False))
    assert ask_to_edit(FIXED, again, TOOLS, OPTS) is None
    assert ask_to_edit(FIXED, turn(), ["read_file"], OPTS) is None
    off = {"editor": {"diagnostics": False}}
    assert ask_to_edit(FIXED, turn(), TOOLS, off) is None


def test_no_reminder_for_a_quote_an_unread_file_or_an_earlier_turn() -> None:
    assert ask_to_edit(QUOTED, turn(), TOOLS, OPTS) is None
    assert ask_to_edit(FIXED, [Message(role="user", content="fix app.py")], TOOLS, OPTS) is None
    later = [*turn(), Message(role="user", content="something else")]
    assert ask_to_edit(FIXED, later, TOOLS, OPTS) is None


def test_no_reminder_after_the_copys_change_went_to_the_user_as_an_edit() -> None:
    call = ToolCall("shown_edit", "insert_edit_into_file", {"filepath": "app.py"})
    offered = Message(role="llm", visible=False, tool_calls=[call], extra={TEXT_CALLS: SHOWN_EDIT})
    assert ask_to_edit(FIXED, turn(offered), TOOLS, OPTS) is None
