"""The render protocol: Python's op values (render_ops.py) and render.lua's handlers match."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from codecompanion import render_ops
from codecompanion.render_ops import RenderOp
from tests.support.nvim import ROOT, Editor, wait_for

RENDER_LUA = ROOT / "lua" / "codecompanion" / "render.lua"


def test_an_unknown_op_kind_is_an_error_in_the_log_and_the_batch_goes_on(editor: Editor) -> None:
    bufnr = editor.lua("local b = vim.api.nvim_create_buf(false, true); return b")
    applied = editor.lua(
        "return require('codecompanion.render').apply(...)",
        bufnr,
        [
            {"kind": "append", "text": "before"},
            {"kind": "no_such_kind", "text": "lost"},
            {"kind": "append", "text": " after"},
        ],
    )
    assert applied is True
    assert editor.lines(bufnr) == ["before after"]
    log = Path(editor.lua("return require('codecompanion.host').log_path()"))
    assert 'codecompanion: render: unknown op kind "no_such_kind"' in log.read_text()
    wait_for(
        lambda: (
            'unknown op kind "no_such_kind"'
            in editor.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
        )
    )


def test_a_failing_handler_is_an_error_in_the_log(editor: Editor) -> None:
    bufnr = editor.lua("local b = vim.api.nvim_create_buf(false, true); return b")
    editor.lua("require('codecompanion.render').apply(...)", bufnr, [{"kind": "replace"}])
    log = Path(editor.lua("return require('codecompanion.host').log_path()"))
    assert "codecompanion: render: replace: " in log.read_text()


def _lua_classes() -> dict[str, set[str]]:
    """`codecompanion.op.<Name>` classes in render.lua and their fields, read from the source."""
    classes: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in RENDER_LUA.read_text().splitlines():
        found = re.match(r"---@class codecompanion\.op\.(\w+)", line)
        if found:
            current = classes.setdefault(found.group(1), set())
            continue
        field = re.match(r"---@field (\w+)", line)
        if field and current is not None:
            current.add(field.group(1))
        elif not line.startswith("---"):
            current = None
    return classes


def test_every_python_op_kind_has_a_lua_handler_and_every_handler_a_kind(editor: Editor) -> None:
    handled = set(editor.lua("return require('codecompanion.render').kinds()"))
    assert handled == render_ops.KINDS
    assert set(RenderOp.__subclasses__()) == set(render_ops.OPS)
    assert len(render_ops.KINDS) == len(render_ops.OPS)


def test_each_op_has_the_same_fields_in_python_and_lua() -> None:
    lua = _lua_classes()
    python = {op.__name__: {f.name for f in dataclasses.fields(op)} for op in render_ops.OPS}
    assert lua == python


def test_each_handler_takes_the_op_of_its_kind() -> None:
    kind_of = {op.__name__: op.KIND for op in render_ops.OPS}
    source = RENDER_LUA.read_text()
    pairs = re.findall(r"---@param op codecompanion\.op\.(\w+)\nfunction handlers\.(\w+)\(", source)
    assert len(pairs) >= len(render_ops.OPS) - 1  # lock takes no op
    for name, handler in pairs:
        assert kind_of[name] == handler


def test_an_op_crosses_with_its_kind_and_without_unset_optional_fields() -> None:
    assert render_ops.Tool(call_id="c", title="t").wire() == {
        "kind": "tool",
        "call_id": "c",
        "title": "t",
    }
    assert render_ops.SetVar(name="v", value=None).wire() == {
        "kind": "set_var",
        "name": "v",
        "value": None,
    }
    assert render_ops.Event(name="ChatDone").wire() == {
        "kind": "event",
        "name": "ChatDone",
        "data": {},
    }


def test_progress_is_paced_and_a_question_is_not() -> None:
    assert render_ops.Append(text="a").paced()
    assert not render_ops.Header(role="user", text="## Me").paced()
    assert render_ops.ToolStatus(call_id="c", status="running").paced()
    assert not render_ops.ToolStatus(call_id="c", status="awaiting_approval").paced()
    assert render_ops.Event(name="RequestStreaming").paced()
    assert not render_ops.Event(name="ChatDone").paced()
