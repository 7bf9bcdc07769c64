"""The render protocol's Lua half: one handler per op kind; an unknown kind is an error."""

from __future__ import annotations

from pathlib import Path

from tests.nvim.harness import Editor, wait_for


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
