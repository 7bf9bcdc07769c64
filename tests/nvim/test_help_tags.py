"""`:help codecompanion` works from a fresh copy of the plugin (no doc/tags shipped)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tests.support.nvim import ROOT, Editor

StartNvim = Callable[..., Editor]


def test_help_works_without_shipped_tags(start_nvim: StartNvim, tmp_path: Path) -> None:
    copy = tmp_path / "plugin-copy"
    for part in ("plugin", "lua", "doc", "ftplugin"):
        shutil.copytree(ROOT / part, copy / part)
    (copy / "doc" / "tags").unlink(missing_ok=True)
    ed = start_nvim()
    # The copy comes first on 'runtimepath' and its plugin file runs as a plugin manager would.
    ed.nvim.command(f"set runtimepath^={copy}")
    ed.nvim.command("unlet g:loaded_codecompanion")
    ed.nvim.command(f"source {copy / 'plugin' / 'codecompanion.lua'}")
    assert (copy / "doc" / "tags").exists()
    ed.nvim.command("help codecompanion")
    assert ed.nvim.current.buffer.name == str(copy / "doc" / "codecompanion.txt")
    ed.nvim.command("help codecompanion-status")
    assert "STATUSLINE" in ed.nvim.current.line or "status" in ed.nvim.current.line


def test_help_codecompanion_opens_the_top_of_the_file(editor: Editor) -> None:
    editor.nvim.command("help codecompanion")
    assert editor.nvim.current.buffer.name.endswith("codecompanion.txt")
    assert editor.nvim.current.window.cursor[0] <= 3  # the `*codecompanion*` tag, not a section


def test_help_text_has_no_stray_backticks() -> None:
    # A backtick left open on a line shows as a literal `, not as code (outside example blocks).
    text = (ROOT / "doc" / "codecompanion.txt").read_text().splitlines()
    odd = [
        f"{n}: {line}"
        for n, line in enumerate(text, 1)
        if line.count("`") % 2 and not line.strip().startswith("```")
    ]
    assert odd == []
