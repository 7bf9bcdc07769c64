"""The Lua → Python messages: Lua's LuaCATS classes and the host's message values match.

Every `codecompanion.msg.<name>` class in `lua/codecompanion/*.lua` names the same fields, of
the same types and optionality, as the value of that name in `nvim/messages.py`; every message
Lua sends has its class, and every field a sending call writes is a field of it; the host's
dispatch tables handle exactly those messages. Read from the sources, never copied.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing

import pytest

from codecompanion.nvim import messages
from codecompanion.nvim.app import NOTIFICATIONS, REQUESTS
from tests.support.lua_sends import sent as messages_sent
from tests.support.nvim import ROOT

LUA = ROOT / "lua" / "codecompanion"

Fields = dict[str, tuple[str, bool]]  # field -> (LuaCATS type, optional)


def _lua_sources() -> str:
    return "\n".join(p.read_text() for p in sorted(LUA.rglob("*.lua")))


def _lua_classes(src: str) -> dict[str, Fields]:
    """The `codecompanion.msg.<name>` classes of `src` and their fields."""
    classes: dict[str, Fields] = {}
    current: Fields | None = None
    for line in src.splitlines():
        found = re.match(r"---@class codecompanion\.msg\.(\w+)", line)
        if found:
            current = classes.setdefault(found.group(1), {})
            continue
        field = re.match(r"---@field (\w+)(\??) (\S+)", line)
        if field and current is not None:
            current[field.group(1)] = (field.group(3), field.group(2) == "?")
        elif not line.startswith("---"):
            current = None
    return classes


def _lua_type(hint: object) -> tuple[str, bool]:
    """The LuaCATS spelling of a message field's Python type, and whether it may be left out
    (`object` is `any`, which holds nil already)."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    kinds = typing.get_args(hint) if union else (hint,)
    names = {str: "string", int: "integer", bool: "boolean", object: "any"}
    spelled = [
        names.get(kind) or ("string[]" if typing.get_origin(kind) is tuple else "table")  # type: ignore[call-overload]
        for kind in kinds
        if kind is not type(None)
    ]
    return "|".join(spelled), type(None) in kinds


def _python_classes() -> dict[str, Fields]:
    found: dict[str, Fields] = {}
    for kind in (*messages.NOTIFICATIONS, *messages.REQUESTS):
        hints = typing.get_type_hints(kind)
        fields: Fields = {}
        for one in dataclasses.fields(kind):
            spelled, nullable = _lua_type(hints[one.name])
            has_default = (
                one.default is not dataclasses.MISSING
                or one.default_factory is not dataclasses.MISSING
            )
            fields[one.name] = (spelled, (nullable or has_default) and spelled != "any")
        found[kind.NAME] = fields
    return found


def test_every_message_has_one_lua_class_with_the_same_fields() -> None:
    lua, python = _lua_classes(_lua_sources()), _python_classes()
    assert len(python) > 30 and "chat_submit" in python and "changes" in python
    assert sorted(lua) == sorted(python)
    assert {name: lua[name] for name in python} == python


def test_the_check_finds_a_field_lua_names_and_the_host_does_not() -> None:
    src = _lua_sources().replace(
        "---@class codecompanion.msg.chat_mode\n",
        "---@class codecompanion.msg.chat_mode\n---@field speed? integer\n",
    )
    assert _lua_classes(src)["chat_mode"] != _python_classes()["chat_mode"]


def _tables_sent(src: str) -> list[tuple[str, set[str]]]:
    """Each sending call with a table literal: the message's name and the table's own keys."""
    opening = re.compile(
        r'(?:\.notify\(|\bsend\([^,()]+,\s*|rpcnotify,?\s*\(?\s*[\w.]+,\s*"codecompanion",\s*)'
        r'"(\w+)",\s*\{'
    )
    sent = []
    for found in opening.finditer(src):
        depth, start, keys = 1, found.end(), set()
        i = start
        while depth and i < len(src):
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        body, level = src[start : i - 1], 0
        for token in re.finditer(r"[{}]|\b(\w+)\s*=(?!=)", body):
            if token.group(0) in "{}":
                level += 1 if token.group(0) == "{" else -1
            elif level == 0:
                keys.add(token.group(1))
        sent.append((found.group(1), keys))
    return sent


def test_every_sending_call_writes_only_fields_of_its_message() -> None:
    src = _lua_sources()
    lua = _lua_classes(src)
    notes, requests = messages_sent(src)
    assert (notes | requests) - set(lua) == set()
    sent = _tables_sent(src)
    assert len(sent) > 15 and ("chat_submit", {"text", "context"}) in sent
    unknown = [(name, keys - set(lua[name])) for name, keys in sent if keys - set(lua[name])]
    assert unknown == []


def test_the_check_finds_a_field_a_call_writes_that_the_message_lacks() -> None:
    src = 'host.notify("chat_stop", { id = id, loud = { deep = 1 }, quiet = a == b })'
    assert _tables_sent(src) == [("chat_stop", {"id", "loud", "quiet"})]


def test_the_host_dispatches_exactly_the_messages() -> None:
    assert set(NOTIFICATIONS) == {kind.NAME for kind in messages.NOTIFICATIONS}
    assert set(REQUESTS) == {kind.NAME for kind in messages.REQUESTS}


def test_a_message_is_decoded_once_into_its_value() -> None:
    new = messages.decode(
        messages.ChatNew,
        {"id": 7, "bufnr": 3, "cwd": "/p", "adapter": None, "restore": True, "extra": 1},
    )
    assert new == messages.ChatNew(id="7", bufnr=3, cwd="/p", restore=True)
    assert messages.decode(messages.ChatRewind, {"id": "c"}).turn == 1
    paths = messages.decode(messages.Buffers, {"paths": ["/a", "/b"]}).paths
    assert paths == ("/a", "/b")
    assert messages.decode(messages.Hello, {"options": []}).options == {}


@pytest.mark.parametrize(
    ("kind", "args", "line"),
    [
        (messages.ChatMode, {"id": "c", "mode": ["x"]}, "chat_mode: mode is list, not str"),
        (messages.ChatNew, {"id": "c"}, "chat_new: bufnr is missing"),
        (messages.FileSaved, {"path": "/a", "size": "9", "sec": 1, "nsec": 2}, "file_saved: size"),
        (messages.ChatRewind, {"id": "c", "code": 1}, "chat_rewind: code is int, not bool"),
        (messages.Buffers, {"paths": ["/a", 3]}, "buffers: paths is list"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_in_one_line(
    kind: type[messages.Message], args: dict[str, object], line: str
) -> None:
    with pytest.raises(messages.BadMessage) as refused:
        messages.decode(kind, args)
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
