"""A saved chat that cannot be read is reported in one line and kept aside: restoring it by id
does not overwrite it with an empty chat, and the restore picker does not hide it silently."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.faults import (
    chats_folder,
    codecompanion_lines,
    logged,
    messages_area,
    saved_chat_file,
)
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]

# How the file is damaged, and the words the one line says about it.
DAMAGE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "truncated": (lambda data: data[: len(data) // 2], "ends early"),
    "not-utf8": (lambda data: data[:20] + b"\xff\xfe" + data[20:], "not UTF-8"),
    "not-a-chat": (lambda data: b"[1, 2, 3]", "not a saved chat"),
    "bad-message": (
        lambda data: json.dumps({"messages": [{"role": "robot", "content": "x"}]}).encode(),
        "a message cannot be read",
    ),
    # One field of the wrong type, anywhere in the file.
    "tools-a-string": (lambda data: _with(data, tools="all"), "field tools is str"),
    "title-a-list": (lambda data: _with(data, title=["x"]), "field title is list"),
    "cwd-a-number": (lambda data: _with(data, cwd=7), "field cwd is int"),
    "yolo-a-string": (
        lambda data: _with(data, tools={"yolo": "yes"}),
        "field tools.yolo is str",
    ),
    # What crashed chat creation: a message's content a list, arguments nested 5000 deep.
    "content-a-list": (
        lambda data: json.dumps({"messages": [{"role": "user", "content": ["a", "b"]}]}).encode(),
        "message 1's field content is list",
    ),
    "deep-arguments": (
        lambda data: (
            b'{"messages": [{"role": "llm", "tools": {"calls": [{"id": "c", "function": '
            b'{"name": "x", "arguments": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}}}]}}]}"
        ),
        "nests deeper than 100 levels",
    ),
    "approvals-a-string": (
        lambda data: _with(data, tools={"approvals": {"tools": "run_command"}}),
        "field tools.approvals.tools is not a list of text",
    ),
}


def _with(data: bytes, **fields: object) -> bytes:
    """The saved chat with some fields replaced."""
    return json.dumps({**json.loads(data), **fields}).encode()


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_restoring_a_damaged_chat_by_id_reports_it_and_keeps_the_file(
    kind: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
) -> None:
    damage, words = DAMAGE[kind]
    provider_server.enqueue(openai_text("42 it is"), openai_text("a fresh start"))
    ed = start_nvim(config_file=config_file(""))
    path = saved_chat_file(ed)
    broken = damage(path.read_bytes())
    path.write_bytes(broken)
    ed.lua("require('codecompanion').chat({ restore = ... })", path.stem)
    line = wait_for(lambda: [ln for ln in codecompanion_lines(ed) if "damaged" in ln])
    assert len(line) == 1 and path.stem in line[0], line
    assert wait_for(lambda: logged(ed, "damaged", words, path.stem))
    assert "Traceback" not in messages_area(ed)
    kept = list(chats_folder(ed).glob(f"{path.stem}.json.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == broken
    ed.send("hello again")
    ed.wait_event("CodeCompanionChatDone", 2)
    assert kept[0].read_bytes() == broken  # the new chat saved elsewhere, never over it


def test_the_restore_picker_reports_a_damaged_chat_in_one_line(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
) -> None:
    provider_server.enqueue(openai_text("42 it is"))
    ed = start_nvim(config_file=config_file(""))
    path = saved_chat_file(ed)
    path.write_bytes(path.read_bytes()[:-40])
    ed.nvim.command("CodeCompanionChat Restore")
    # Notices arriving together show as one line, the most severe: the damaged chat's.
    lines = wait_for(lambda: [ln for ln in codecompanion_lines(ed) if "damaged" in ln])
    assert len(lines) == 1, lines
    assert wait_for(lambda: logged(ed, "damaged", "ends early"))
    assert list(chats_folder(ed).glob(f"{path.stem}.json.damaged-*"))
