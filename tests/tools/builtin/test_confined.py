"""The confined open: regular files only, no link followed anywhere on the path, nothing opened
that could block or has side effects (checked before the open)."""

from __future__ import annotations

import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from codecompanion.errors import ToolError
from codecompanion.ports import Diagnostic, FreshDiagnostics
from codecompanion.tools.builtin import get_diagnostics
from codecompanion.tools.builtin._support import confined
from tests.support.builtin import FakeTools, run_tool
from tests.support.fakes import FakeEditor


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    (top / "dir").mkdir()
    (top / "dir" / "f.txt").write_text("text\n")
    (top / "link").symlink_to(top / "dir" / "f.txt")
    (top / "dirlink").symlink_to(top / "dir")
    os.mkfifo(top / "fifo")
    return top


def test_reads_a_regular_file(root: Path) -> None:
    data, info = confined.read_file(root / "dir" / "f.txt", "dir/f.txt", 100)
    assert data == b"text\n" and stat.S_ISREG(info.st_mode)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("link", "symbolic link"),
        ("dirlink/f.txt", "symbolic link"),
        ("dir", "is a folder"),
        ("fifo", "FIFO"),
        ("sock", "socket"),
        ("missing", "No such file"),
        ("dir/f.txt/x", "is a file, not a folder"),
    ],
)
def test_refuses_everything_else_without_blocking(root: Path, name: str, message: str) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    done = threading.Event()
    try:
        with pytest.raises(ToolError, match=message):
            confined.read_file(root / name, name, 100)
        done.set()
    finally:
        server.close()
    assert done.is_set()  # a FIFO opened for reading would have blocked here forever


def test_a_device_is_refused_before_it_is_opened(root: Path) -> None:
    with pytest.raises(ToolError, match="a device"):
        confined.read_file(Path("/dev/null"), "/dev/null", 100)


def test_size_limit(root: Path) -> None:
    with pytest.raises(ToolError, match="over the 3-byte limit"):
        confined.read_file(root / "dir" / "f.txt", "f", 3)


def test_needs_a_resolved_path(root: Path) -> None:
    with pytest.raises(ValueError):
        confined.open_folder(root / "dir" / ".." / "dir", "x")
    with pytest.raises(ValueError):
        confined.open_folder(Path("dir"), "x")


def test_creates_folders_but_not_in_a_read_only_one(root: Path) -> None:
    fd = confined.open_folder(root / "a" / "b", "a/b", create=True)
    os.close(fd)
    assert (root / "a" / "b").is_dir()
    (root / "ro").mkdir(mode=0o555)
    with pytest.raises(ToolError, match="read-only"):
        confined.open_folder(root / "ro" / "new", "ro/new", create=True)
    assert not (root / "ro" / "new").exists()


async def test_get_diagnostics_refuses_a_fifo_before_asking_the_editor(root: Path) -> None:
    editor = FakeEditor()
    args = {"filepath": "fifo", "severity": None}
    out = await run_tool(get_diagnostics, args, FakeTools(cwd=root, editor=editor))
    assert out.status == "error" and "FIFO" in out.for_llm
    assert editor.diagnostic_calls == []  # Neovim's bufload would have blocked on it


async def test_get_diagnostics_refuses_a_file_replaced_while_neovim_read_it(root: Path) -> None:
    target = root / "dir" / "f.txt"
    (root / "other.txt").write_text("other\n")

    class SwappingEditor(FakeEditor):
        async def diagnostics(self, path: str, *_args: object, **_kw: object) -> FreshDiagnostics:
            os.replace(root / "other.txt", target)  # another file now has the checked name
            return FreshDiagnostics((Diagnostic(0, 0, "ERROR", "about some file"),), ("lsp",))

    args = {"filepath": "dir/f.txt", "severity": None}
    out = await run_tool(get_diagnostics, args, FakeTools(cwd=root, editor=SwappingEditor()))
    assert out.status == "error" and "was replaced" in out.for_llm, out.for_llm
