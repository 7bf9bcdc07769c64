"""Everything a Neovim with the plugin showed or wrote, to look for a secret in."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.nvim import Editor


def everything_written(ed: Editor) -> dict[str, str]:
    """Every file the editor and its host wrote (log, saved chats, state), by path."""
    return files_under(*(ed.tmp / folder for folder in ("data", "state", "cache")))


def files_under(*roots: Path) -> dict[str, str]:
    """Every file below `roots`, by path, as text.

    A chat saved meanwhile renames its temporary file into place: a file gone between the
    listing and the read means the walk starts again, so the renamed file is read too.
    """
    for _attempt in range(20):
        try:
            return _read_all(roots)
        except FileNotFoundError:
            continue
    return _read_all(roots)


def _read_all(roots: tuple[Path, ...]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for root in roots:
        for base, _dirs, files in os.walk(root):
            for name in files:
                path = Path(base, name)
                texts[str(path)] = path.read_bytes().decode("utf-8", errors="replace")
    return texts


def everything_shown(ed: Editor) -> str:
    """Every buffer's lines and the message area."""
    shown = [str(ed.nvim.exec_lua("return vim.fn.execute('messages')"))]
    for buffer in ed.nvim.api.list_bufs():
        shown += ed.nvim.api.buf_get_lines(buffer, 0, -1, False)
    return "\n".join(shown)
