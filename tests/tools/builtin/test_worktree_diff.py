"""The unstaged diff made in Python matches `git diff` (index lines aside) on real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codecompanion.tools.builtin._support.worktree_diff import unstaged_diff

IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t"]


def git(root: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *argv], cwd=root, check=True, capture_output=True, text=True
    )
    return done.stdout


def without_index_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("index ")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    files = {
        "modified.txt": "a\nb\nc\n",
        "deleted.txt": "gone\n",
        "no_eol.txt": "last",
        "mode.sh": "echo\n",
        "both.sh": "x\n",
        "same.txt": "same\n",
        "binary.bin": "bin\0ary",
        "crlf.txt": "one\ntwo\n",
        "sub/deep.txt": "deep\n",
        "ünïcode name.txt": "u\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(text.encode())
    os.symlink("modified.txt", root / "link")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    (root / "modified.txt").write_text("a\nB\nc\nd\n")
    (root / "deleted.txt").unlink()
    (root / "no_eol.txt").write_text("last changed")
    (root / "mode.sh").chmod(0o755)
    (root / "both.sh").write_text("y\n")
    (root / "both.sh").chmod(0o755)
    (root / "binary.bin").write_bytes(b"bin\0ary2")
    (root / "sub" / "deep.txt").write_text("deeper\n")
    (root / "ünïcode name.txt").write_text("v\n")
    (root / "link").unlink()
    os.symlink("same.txt", root / "link")
    os.utime(root / "same.txt")  # touched, not changed
    return root


async def test_matches_git_diff(repo: Path) -> None:
    ours, unmerged = await unstaged_diff(repo, 10, dict(os.environ))
    theirs = git(repo, "-c", "core.quotepath=off", "diff", "--no-ext-diff", "--no-textconv")
    assert without_index_lines(ours) == without_index_lines(theirs)
    assert unmerged == []
    assert "same.txt" not in ours.replace("+same.txt", "")  # only the link now points at it


async def test_crlf_work_tree_files_are_not_changes(repo: Path) -> None:
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    ours, _unmerged = await unstaged_diff(repo, 10, dict(os.environ))
    assert "crlf.txt" not in ours


async def test_an_empty_repository_and_a_clean_tree(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert await unstaged_diff(tmp_path, 10, dict(os.environ)) == ("", [])


async def test_large_and_emptied_files(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    big = b"line\n" * 600_000  # 3 MB: over the diff limit
    (tmp_path / "grows.txt").write_bytes(b"small\n")
    (tmp_path / "shrinks.txt").write_bytes(big)
    (tmp_path / "big_gone.txt").write_bytes(big)
    (tmp_path / "big_same.txt").write_bytes(big)
    (tmp_path / "emptied.txt").write_bytes(b"text\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    (tmp_path / "grows.txt").write_bytes(big)
    (tmp_path / "shrinks.txt").write_bytes(b"small\n")
    (tmp_path / "big_gone.txt").unlink()
    (tmp_path / "emptied.txt").write_bytes(b"")
    ours, _unmerged = await unstaged_diff(tmp_path, 10, dict(os.environ))
    blocks = {b.split("\n", 1)[0].split(" b/")[-1]: b for b in ours.split("diff --git a/")[1:]}
    assert set(blocks) == {"grows.txt", "shrinks.txt", "big_gone.txt", "emptied.txt"}
    for name in ("grows.txt", "shrinks.txt", "big_gone.txt"):
        assert "not diffed" in blocks[name], blocks[name]
    assert "deleted file mode 100644" in blocks["big_gone.txt"]
    assert "-text" in blocks["emptied.txt"]
    assert len(ours) < 5_000


async def test_files_whose_stat_data_match_the_index_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in git: a file whose size, times and inode match the index, and that is older than
    # the index, is unchanged without being read; only the edited file is read.
    from codecompanion.tools.builtin._support import worktree_diff

    git(tmp_path, "init", "-q")
    for index in range(20):
        (tmp_path / f"f{index}.txt").write_text(f"file {index}\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    (tmp_path / "f7.txt").write_text("edited\n")
    read: list[str] = []
    real = worktree_diff._worktree

    def counting(root: Path, entry: worktree_diff.Entry, algorithm: str) -> object:
        read.append(entry.path)
        return real(root, entry, algorithm)

    monkeypatch.setattr(worktree_diff, "_worktree", counting)
    ours, _unmerged = await unstaged_diff(tmp_path, 10, dict(os.environ))
    assert "+edited" in ours
    assert read == ["f7.txt"]
