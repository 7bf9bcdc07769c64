"""The editor side of confinement: a loaded buffer is found by the exact path the host checked,
never through a symbolic link that replaced a folder on that path afterwards (real Neovim)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.nvim import Editor

SECRET = "outside secret: do not read"


def test_a_buffer_outside_is_not_reached_through_a_swapped_folder(
    start_nvim: Callable[..., Editor], tmp_path: Path
) -> None:
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    root = (tmp_path / "project").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "secret.txt").write_text("inside\n")
    (root / "real.txt").write_text("real\n")
    (root / "alias.txt").symlink_to(root / "real.txt")
    editor = start_nvim()
    editor.nvim.command(f"edit {outside / 'secret.txt'}")  # the user's own file, outside
    editor.nvim.command(f"edit {root / 'alias.txt'}")  # opened through a link inside
    # The host checked sub/secret.txt while sub was a folder; now sub is a link to outside.
    (root / "sub" / "secret.txt").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside)
    api = "return require('codecompanion.editor')"
    checked = str(root / "sub" / "secret.txt")
    assert editor.lua(f"{api}.buffer_lines(...)", checked) is None
    assert editor.lua(f"{api}.set_buffer_lines(...)", checked, ["pwned"]) is False
    loaded = editor.lua("return vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())")
    outside_buffers = [name for name in loaded if name.startswith(str(outside))]
    lines = editor.lua(f"return vim.fn.getbufline('{outside / 'secret.txt'}', 1, '$')")
    assert lines == [SECRET] and len(outside_buffers) == 1
    # A buffer opened through a link is still found by its resolved path.
    assert editor.lua(f"{api}.buffer_lines(...)", str(root / "real.txt")) == ["real"]
