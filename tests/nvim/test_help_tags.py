"""`:help codecompanion` works from a fresh copy of the plugin (no doc/tags shipped)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tests.nvim.harness import ROOT, Editor

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
