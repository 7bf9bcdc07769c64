"""An answer that shows a changed copy of a file the model read in this turn and calls nothing:
the file is unchanged, so the model is asked once to make the edit, given as the call's
arguments when the change is a replacement of lines (small models often print the fixed file
instead of editing it)."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..messages import Message
from .diagnostics import DiagnosticsOptions

EDIT_TOOL = "insert_edit_into_file"
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
READ_HEAD = re.compile(r"^(.+?)(?: \(as its buffer open in Neovim has it\))?: lines \d+-\d+ of ")
SHARED = 0.5  # the part of a block's lines found in the file for it to count as its copy
ASK = "Call {tool} now: {path} is unchanged"
MAX_HUNKS = 3


def _blocks(text: str) -> Iterator[list[str]]:
    """Each fenced block's non-blank lines, without their line ends."""
    for match in FENCE.finditer(text):
        yield [line.rstrip() for line in match[2].splitlines() if line.strip()]


def _reads(messages: Sequence[Message]) -> dict[str, list[str]]:
    """The files read since the user's last message: path -> their non-blank read lines."""
    found: dict[str, list[str]] = {}
    for message in reversed(messages):
        if message.role == "user" and message.visible:
            break
        if message.role != "tool" or message.tool_name != "read_file" or message.is_error:
            continue
        head = READ_HEAD.match(message.content or "")
        body = next(_blocks(message.content or ""), None)
        if head and body is not None:
            found.setdefault(head[1], []).extend(body)
    return found


def _replacements(old: list[str], new: list[str]) -> list[dict[str, str]]:
    """The lines `new` replaces in `old`, as edits (oldText, newText), at most MAX_HUNKS."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    edits = [
        {"oldText": "\n".join(old[i1:i2]), "newText": "\n".join(new[j1:j2])}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag == "replace"
    ]
    return edits if 0 < len(edits) <= MAX_HUNKS else []


def changed_copy(text: str, messages: Sequence[Message]) -> tuple[str, list[dict[str, str]]] | None:
    """The file read in this turn whose lines a block of `text` mostly repeats, with some line
    changed, and the replacements it shows; None when there is none."""
    reads = _reads(messages)
    for block in _blocks(text):
        if len(block) < 2:
            continue
        for path, lines in reads.items():
            stripped = {line.strip() for line in lines}
            common = sum(line.strip() in stripped for line in block)
            if SHARED * len(block) <= common < len(block):
                return path, _replacements(lines, block)
    return None


def asked(messages: Sequence[Message]) -> bool:
    """Whether the model was already asked, since the user's last message, to make its edit."""
    for message in reversed(messages):
        if message.role == "user" and message.visible:
            return False
        if message.role == "user" and (message.content or "").startswith(f"Call {EDIT_TOOL} now"):
            return True
    return False


def ask_to_edit(
    text: str, messages: Sequence[Message], offered: Sequence[str], opts: Mapping[str, Any]
) -> str | None:
    """The message asking the model to make the edit its answer `text` only shows, or None:
    with the editor loop on, the edit tool offered, once per user message."""
    if EDIT_TOOL not in offered or DiagnosticsOptions.from_opts(opts).level == "off":
        return None
    found = changed_copy(text, messages)
    if found is None or asked(messages):
        return None
    path, edits = found
    ask = ASK.format(tool=EDIT_TOOL, path=path) + ": your answer only showed the change."
    if edits:
        args = json.dumps({"filepath": path, "edits": edits}, ensure_ascii=False)
        ask += f" The change your answer shows, as the call's arguments: {args}"
    else:
        ask += f" Call it with oldText: the lines as they are in {path}, newText: them changed."
    return ask + " If the user asked for no change, answer the user instead."
