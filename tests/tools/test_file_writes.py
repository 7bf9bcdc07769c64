"""Writes keep what the file is: a read-only or unwritable file is refused (root included), mode,
owner and hard links survive an edit, a read-only folder gets no new entries, and a file that
mixes CRLF and LF keeps each line's own ending.

Everything is real: chmod'ed files and folders, chown'ed files, hard links, and (as root) a
forked child that drops to the `nobody` user so the kernel's own permission check applies.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codecompanion.tools.builtin import create_file, delete_file, insert_edit_into_file, read_file
from tests.support.builtin import FakeTools, Outcome, run_tool
from tests.support.fakes import FakeEditor
from tests.support.other_users import shared_folder

NOBODY = 65534
ROOT = os.geteuid() == 0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project root (resolved)."""
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


def _edit(old: str, new: str, mode: str | None = None, path: str = "f.txt") -> dict[str, Any]:
    edits = [{"oldText": old, "newText": new, "replaceAll": None}]
    return {"filepath": path, "edits": edits, "explanation": "x", "mode": mode}


async def _run(module: ModuleType, args: dict[str, Any], project: Path, **kw: Any) -> Outcome:
    return await run_tool(module, args, FakeTools(cwd=project, **kw), approved=True)


def _identity(path: Path) -> tuple[int, int, int, int, int]:
    info = path.stat()
    return info.st_ino, info.st_mode, info.st_uid, info.st_gid, info.st_nlink


READ_ONLY_MODES = [0o444, 0o400, 0o555, 0o000]
WRITES = {
    "edit": (insert_edit_into_file, _edit("keep", "changed")),
    "overwrite": (insert_edit_into_file, _edit("", "changed\n", "overwrite")),
    "delete": (delete_file, {"filepath": "f.txt"}),
}


@pytest.mark.parametrize("mode", READ_ONLY_MODES, ids=oct)
@pytest.mark.parametrize("write", [*WRITES, "buffer edit"])
async def test_a_read_only_file_is_never_changed(project: Path, mode: int, write: str) -> None:
    path = project / "f.txt"
    path.write_text("keep\n")
    path.chmod(mode)
    before = _identity(path)
    editor = FakeEditor(buffers={str(path): ["keep"]}) if write == "buffer edit" else None
    module, args = WRITES.get(write, WRITES["edit"])
    out = await _run(module, args, project, editor=editor)
    assert out.status == "error" and "read-only" in out.for_llm, out.for_llm
    assert "\n" not in out.for_llm.removeprefix(f"{module.TOOL.name} failed: ").strip()
    path.chmod(0o600)
    assert path.read_text() == "keep\n" and _identity(path)[0] == before[0]
    assert (editor.buffers[str(path)] if editor else ["keep"]) == ["keep"]
    assert sorted(p.name for p in project.iterdir()) == ["f.txt"]


@pytest.fixture
def shared_project() -> Iterator[Path]:
    """A project folder the `nobody` user can reach (pytest's own tmp folders are private)."""
    with shared_folder("cc-perm-", mode=0o755) as top:
        yield top


def _as_nobody(module: ModuleType, args: dict[str, Any], project: Path) -> dict[str, Any]:
    """Run one tool call in a forked child that dropped to the `nobody` user."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            out = asyncio.run(_run(module, args, project))
            os.write(write, json.dumps([out.status, out.for_llm]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        ready, _, _ = select.select([pipe], [], [], 60)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        data = pipe.read()
    os.waitpid(pid, 0)
    assert data, "the child running as nobody reported nothing"
    status, text = json.loads(data)
    return {"status": status, "text": text}


async def test_a_file_the_user_cannot_write_is_refused(shared_project: Path) -> None:
    """Write bits exist but not for this user: the kernel's check decides, not the folder's."""
    path = shared_project / "f.txt"
    path.write_text("keep\n")
    if ROOT:
        os.chown(shared_project, NOBODY, NOBODY)  # nobody may replace entries in the folder
        path.chmod(0o644)  # owned by root: nobody may read it but not write it
        await _run(insert_edit_into_file, _edit("absent", "x"), shared_project)  # warm imports
        outcomes = [
            _as_nobody(insert_edit_into_file, args, shared_project)
            for args in (_edit("keep", "changed"), _edit("", "changed\n", "overwrite"))
        ]
    else:
        path.chmod(0o464)  # this user owns it without the owner's write bit; the group has one
        outcomes = [
            {"status": out.status, "text": out.for_llm}
            for args in (_edit("keep", "changed"), _edit("", "changed\n", "overwrite"))
            for out in [await _run(insert_edit_into_file, args, shared_project)]
        ]
    for outcome in outcomes:
        assert outcome["status"] == "error" and "not writable" in outcome["text"], outcome
    assert path.read_text() == "keep\n"
    assert path.stat().st_uid == os.geteuid()
    assert [p.name for p in shared_project.iterdir()] == ["f.txt"]


@pytest.mark.parametrize("mode", [0o644, 0o751, 0o600, 0o2775, 0o4755, 0o1777], ids=oct)
async def test_an_edit_keeps_mode_and_owner(project: Path, mode: int) -> None:
    path = project / "f.txt"
    path.write_text("keep\n")
    owner = (NOBODY, NOBODY) if ROOT else (os.geteuid(), os.getegid())
    os.chown(path, *owner)
    path.chmod(mode)
    out = await _run(insert_edit_into_file, _edit("keep", "changed"), project)
    assert out.status == "success", out.for_llm
    info = path.stat()
    assert path.read_text() == "changed\n"
    assert (info.st_mode & 0o7777, info.st_uid, info.st_gid) == (mode, *owner)
    assert [p.name for p in project.iterdir()] == ["f.txt"]


async def test_an_edit_keeps_extended_attributes(project: Path) -> None:
    path = project / "f.txt"
    path.write_text("keep\n")
    try:
        os.setxattr(path, "user.origin", b"kept")
    except OSError as exc:  # a file system without user attributes
        pytest.skip(f"no user xattrs here: {exc}")
    out = await _run(insert_edit_into_file, _edit("keep", "changed"), project)
    assert out.status == "success", out.for_llm
    assert path.read_text() == "changed\n" and os.getxattr(path, "user.origin") == b"kept"


@pytest.mark.parametrize("mode", [None, "overwrite"])
async def test_hard_links_see_the_edit(project: Path, mode: str | None) -> None:
    first = project / "f.txt"
    first.write_text("keep\n")
    (project / "sub").mkdir()
    others = [project / "g.txt", project / "sub" / "h.txt"]
    for other in others:
        os.link(first, other)
    args = _edit("keep", "changed") if mode is None else _edit("", "changed\n", mode)
    out = await _run(insert_edit_into_file, args, project)
    assert out.status == "success", out.for_llm
    for name in [first, *others]:
        assert name.read_text() == "changed\n"
        assert name.stat().st_ino == first.stat().st_ino and name.stat().st_nlink == 3


async def test_a_read_only_folder_gets_no_new_entries(project: Path) -> None:
    folder = project / "ro"
    folder.mkdir()
    path = folder / "f.txt"
    path.write_text("keep\n")
    folder.chmod(0o555)
    try:
        entries, stamp = sorted(os.listdir(folder)), folder.stat().st_mtime_ns
        inode = path.stat().st_ino
        out = await _run(insert_edit_into_file, _edit("keep", "changed", path="ro/f.txt"), project)
        assert out.status == "success", out.for_llm  # the file itself is writable: in place
        assert path.read_text() == "changed\n" and path.stat().st_ino == inode
        for target in ("ro/new.txt", "ro/deeper/new.txt"):
            out = await _run(create_file, {"filepath": target, "content": "x\n"}, project)
            assert out.status == "error" and "read-only" in out.for_llm, out.for_llm
        assert sorted(os.listdir(folder)) == entries and folder.stat().st_mtime_ns == stamp
    finally:
        folder.chmod(0o755)


MIXED = [
    # (file bytes, oldText, newText, mode, bytes after the edit)
    (b"a\r\nb\r\nc\nd\r\n", "c", "C", None, b"a\r\nb\r\nC\nd\r\n"),
    (b"a\nb\r\nc\nd\n", "b", "B", None, b"a\nB\r\nc\nd\n"),
    (b"x\r\ny\r\nz\n", "y", "y\ny2", None, b"x\r\ny\r\ny2\r\nz\n"),
    (b"x\ny\nz\r\nw\r\n", "z", "z\nz2", None, b"x\ny\nz\r\nz2\r\nw\r\n"),
    (b"p\r\nq\nr\ns\n", "p\nq", "P\nQ", None, b"P\r\nQ\nr\ns\n"),
    (b"a\r\nb\nc", "c", "C", None, b"a\r\nb\nC"),
    (b"a\r\nb\nc\r\n", "b\n", "", None, b"a\r\nc\r\n"),
    (b"a\r\nb\nc\r\n", "", "a\nb\nB2\nc\n", "overwrite", b"a\r\nb\nB2\nc\r\n"),
    (b"one\r\ntwo\r\n", "two", "2", None, b"one\r\n2\r\n"),
    (b"one\ntwo\n", "two", "2\n3", None, b"one\n2\n3\n"),
]


@pytest.mark.parametrize(("data", "old", "new", "mode", "expected"), MIXED)
async def test_each_line_keeps_its_own_ending(
    project: Path, data: bytes, old: str, new: str, mode: str | None, expected: bytes
) -> None:
    path = project / "f.txt"
    path.write_bytes(data)
    out = await _run(insert_edit_into_file, _edit(old, new, mode), project)
    assert out.status == "success", out.for_llm
    assert path.read_bytes() == expected


async def test_a_mixed_file_reads_without_carriage_returns(project: Path) -> None:
    (project / "f.txt").write_bytes(b"a\r\nb\nc\n")
    args = {"filepath": "f.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    out = await _run(read_file, args, project)
    assert "```txt\na\nb\nc\n```" in out.for_llm and "\r" not in out.for_llm
