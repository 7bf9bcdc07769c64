"""An answer that shows a changed copy of a file the model read in this turn and calls nothing,
when its change could not be read as an edit call (textcalls/shown_edit.py): the file is
unchanged, so with the editor loop on the model is asked once to make the edit itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import Message
from ..textcalls.shown_edit import EDIT_TOOL, offered_before, shown_edit, this_turn
from .diagnostics import DiagnosticsOptions

ASK = "Call {tool} now: {path} is unchanged"


def asked(messages: Sequence[Message]) -> bool:
    """Whether the model was already asked, since the user's last message, to make its edit."""
    return any(
        message.role == "user" and (message.content or "").startswith(f"Call {EDIT_TOOL} now")
        for message in this_turn(messages)
    )


def ask_to_edit(
    text: str, messages: Sequence[Message], offered: Sequence[str], opts: Mapping[str, Any]
) -> str | None:
    """The message asking the model to make the edit its answer `text` only shows, or None:
    with the editor loop on, the edit tool offered, once per user message, and not after the
    change of a copy was read as an edit (the user answered it)."""
    if EDIT_TOOL not in offered or DiagnosticsOptions.from_opts(opts).level == "off":
        return None
    found = shown_edit(text, messages)
    if found is None or asked(messages) or offered_before(messages):
        return None  # asked once; or its change already went to the user as an edit
    return (
        ASK.format(tool=EDIT_TOOL, path=found.path)
        + f": your answer only showed the change. Call it with oldText: the lines as they are in"
        f" {found.path}, newText: them changed. If the user asked for no change, answer the user"
        " instead."
    )
