"""An answer that shows a changed copy of a file the model read in this turn and calls nothing:
the file is unchanged, so the model is asked once to make the edit (small models often print
the fixed file instead of editing it)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..messages import Message
from .diagnostics import DiagnosticsOptions

EDIT_TOOL = "insert_edit_into_file"
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
READ_HEAD = re.compile(r"^(.+?)(?: \(as its buffer open in Neovim has it\))?: lines \d+-\d+ of ")
SHARED = 0.5  # the part of a block's lines found in the file for it to count as its copy
ASK = "Your answer shows a changed copy of {path}, but {path} itself is unchanged"


def _blocks(text: str) -> Iterator[list[str]]:
    """Each fenced block's non-blank lines, stripped."""
    for match in FENCE.finditer(text):
        yield [line.strip() for line in match[2].splitlines() if line.strip()]


def _reads(messages: Sequence[Message]) -> dict[str, set[str]]:
    """The files read since the user's last message: path -> their read lines, stripped."""
    found: dict[str, set[str]] = {}
    for message in reversed(messages):
        if message.role == "user" and message.visible:
            break
        if message.role != "tool" or message.tool_name != "read_file" or message.is_error:
            continue
        head = READ_HEAD.match(message.content or "")
        body = next(_blocks(message.content or ""), None)
        if head and body is not None:
            found.setdefault(head[1], set()).update(body)
    return found


def changed_copy(text: str, messages: Sequence[Message]) -> str | None:
    """The file read in this turn whose lines a block of `text` mostly repeats, with some line
    changed; None when there is none."""
    reads = _reads(messages)
    for block in _blocks(text):
        if len(block) < 2:
            continue
        for path, lines in reads.items():
            common = sum(line in lines for line in block)
            if SHARED * len(block) <= common < len(block):
                return path
    return None


def asked(messages: Sequence[Message]) -> bool:
    """Whether the model was already asked, since the user's last message, to make its edit."""
    for message in reversed(messages):
        if message.role == "user" and message.visible:
            return False
        if message.role == "user" and (message.content or "").startswith(ASK.split("{")[0]):
            return True
    return False


def ask_to_edit(
    text: str, messages: Sequence[Message], offered: Sequence[str], opts: Mapping[str, Any]
) -> str | None:
    """The message asking the model to make the edit its answer `text` only shows, or None:
    with the editor loop on, the edit tool offered, once per user message."""
    if EDIT_TOOL not in offered or DiagnosticsOptions.from_opts(opts).level == "off":
        return None
    path = changed_copy(text, messages)
    if path is None or asked(messages):
        return None
    return (
        ASK.format(path=path) + ": you called no tool. If this change is what the user asked "
        f"for, make it now with {EDIT_TOOL} on {path} (oldText: the lines as they are in the "
        "file; newText: the same lines changed). Otherwise answer the user."
    )
