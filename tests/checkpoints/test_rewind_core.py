"""Checkpoints in a real folder: captures, attribution, rewind and undo, the store's limits."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codecompanion.checkpoints import Checkpoints, Settings, scan
from codecompanion.checkpoints.rewind import Progress
from codecompanion.checkpoints.scan import ScanCache, ScanLimits, capture
from codecompanion.checkpoints.store import ObjectStore
from tests.support.checkpoints import Driver, state, tree_digest, write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root, {"a.py": b"a = 1\n", "b.py": b"b = 1\n", "keep/u.txt": b"user\n"})
    return root


def test_rewind_restores_what_the_chat_changed_and_leaves_the_users_files(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    original = state(project)
    d.turn()
    d.tool_round({"a.py": b"a = 2\n", "new/c.py": b"c\n"})
    write(project, {"keep/u.txt": b"user edit\n"})  # by hand, between turns
    d.turn()
    d.tool_round({"b.py": None, "bin.dat": bytes(range(256))})
    os.chmod(project / "a.py", 0o755)  # a command changes a mode
    d.cp.record(d.chat, project, "tools_done", "chat")
    after_turns = state(project)

    plan = d.rewind(1, take_conflicts=False)

    assert plan.conflicts == []
    now = state(project)
    assert now["a.py"] == original["a.py"]
    assert now["b.py"] == original["b.py"]
    assert "new/c.py" not in now and not (project / "new").exists()
    assert "bin.dat" not in now
    assert now["keep/u.txt"] == (original["keep/u.txt"][0], b"user edit\n")

    d.undo()
    assert state(project) == after_turns


def test_a_file_both_changed_is_a_conflict_kept_or_taken(project: Path, tmp_path: Path) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\n"})
    write(project, {"a.py": b"chat\nand user\n"})
    plan = d.rewind(1, take_conflicts=False)
    assert [c.path for c in plan.conflicts] == ["a.py"]
    assert (project / "a.py").read_bytes() == b"chat\nand user\n"  # kept mine
    d.undo()
    plan = d.rewind(1, take_conflicts=True)
    assert (project / "a.py").read_bytes() == b"a = 1\n"
    d.undo()
    assert (project / "a.py").read_bytes() == b"chat\nand user\n"


def test_undo_asks_about_a_file_changed_after_the_rewind(project: Path, tmp_path: Path) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\n"})
    d.rewind(1, take_conflicts=True)
    write(project, {"a.py": b"typed after the rewind\n"})
    plan = d.undo(take_conflicts=False)
    assert [c.path for c in plan.conflicts] == ["a.py"]
    assert (project / "a.py").read_bytes() == b"typed after the rewind\n"


def test_changes_since_a_turn_have_hunks_and_a_summary(project: Path, tmp_path: Path) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"a = 1\nb = 2\n", "c.py": b"x\n"})
    write(project, {"keep/u.txt": b"not the chat's\n"})
    changes = d.cp.changes(d.chat, project, 1)
    assert [(c.path, c.status, c.added, c.removed) for c in changes] == [
        ("a.py", "modified", 1, 0),
        ("c.py", "added", 1, 0),
    ]
    from codecompanion.checkpoints.changes import summary

    turn = d.cp.turn_changes(d.chat, project, 1)
    assert summary(turn) == "2 files changed: a.py +1, c.py (new) +1"
    listing = d.cp.turns(d.chat, project)
    assert [(t.turn, t.text, t.files) for t in listing] == [(1, "do it", ["a.py", "c.py"])]


def test_unchanged_files_are_not_read_again(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecompanion.checkpoints import scan

    monkeypatch.setattr(scan, "RACY_NS", 0)  # files written just now count as settled
    store = ObjectStore(tmp_path / "data")
    for i in range(50):
        write(project, {f"many/f{i}.txt": f"{i}\n".encode()})
    first, cache = capture(project, store, ScanCache(), ScanLimits())
    second, cache = capture(project, store, cache, ScanLimits())
    write(project, {"a.py": b"changed\n"})
    third, _ = capture(project, store, cache, ScanLimits())
    assert (first.read, second.read, third.read) == (53, 0, 1)
    assert second.written == 0 and second.tree == first.tree
    assert third.tree != second.tree and third.written > 0


def test_large_files_are_listed_not_stored_and_excluded_folders_skipped(
    project: Path, tmp_path: Path
) -> None:
    write(project, {"big.bin": b"x" * 5000, "node_modules/p/i.js": b"1", ".git/HEAD": b"ref"})
    store = ObjectStore(tmp_path / "data")
    result, _ = capture(project, store, ScanCache(), ScanLimits(max_file_bytes=1000))
    files = store.flatten(result.tree)
    assert files["big.bin"].kind == "b" and files["big.bin"].oid == ""
    assert "node_modules/p/i.js" not in files and ".git/HEAD" not in files
    assert result.skipped == ["big.bin"]


def test_a_symlink_and_a_fifo(project: Path, tmp_path: Path) -> None:
    d = Driver(project, tmp_path / "data")
    os.symlink("a.py", project / "link")
    os.mkfifo(project / "pipe")
    d.turn()
    d.cp.record(d.chat, project, "tools", "user")
    (project / "link").unlink()
    os.symlink("b.py", project / "link")
    d.cp.record(d.chat, project, "tools_done", "chat")
    d.rewind(1, take_conflicts=False)
    assert os.readlink(project / "link") == "a.py"


def test_a_restore_never_writes_through_a_link_out_of_the_project(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(project, {"sub/x.py": b"mine\n"})
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"sub/x.py": b"chat made\n"})
    shutil.rmtree(project / "sub")
    os.symlink(outside, project / "sub")  # the folder is now a link out
    planned = d.cp.plan(d.chat, project, 1)
    assert planned is not None
    _, before, plan = planned
    assert [i.path for i in plan.conflicts] == ["sub/x.py"]
    outcome = d.cp.restore(d.chat, project, plan.conflicts, Progress("rewound", 1, {}))
    assert list(outside.iterdir()) == []
    assert outcome.failed == ["sub/x.py: sub is not a folder (a link or a file)"]


def test_pruning_drops_the_oldest_chats_first(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    cp = Checkpoints(data, Settings.from_opts({"max_store_mb": 0.02}))  # ~20 KB
    for n in range(3):
        write(project, {f"blob{n}.bin": os.urandom(12_000)})
        cp.record(f"chat{n}", project, "turn", "user")
        write(project, {f"blob{n}.bin": None})
    cp._open.clear()  # noqa: SLF001 - as after a restart: nothing is open
    freed = cp.prune(active={"chat2"})
    assert freed > 0
    left = {chat for _, chat, _ in cp.journals.all()}
    assert "chat2" in left and "chat0" not in left
    record = cp.journals.load("chat2", str(project)).records[0]
    assert cp.store.flatten(record.tree)["blob2.bin"].oid  # what is left is whole
    cp.store.get(cp.store.flatten(record.tree)["blob2.bin"].oid)


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_in_a_git_repository_its_index_refs_stash_and_hooks_are_untouched(
    project: Path, tmp_path: Path
) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "one")
    write(project, {"a.py": b"stashed\n"})
    git(project, "stash", "-q")
    write(project, {"b.py": b"b = staged\n"})
    git(project, "add", "b.py")
    hook = project / ".git/hooks/pre-commit"
    marker = tmp_path / "hook-ran"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (project / ".gitattributes").write_text("*.py filter=evil\n")
    git(project, "config", "filter.evil.clean", f"touch {marker}; cat")
    before_git = tree_digest(project / ".git")

    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\r\n", "c.py": b"new\n"})
    after = state(project)
    d.rewind(1, take_conflicts=True)
    assert (project / "a.py").read_bytes() == b"a = 1\n"
    d.undo()
    assert state(project) == after  # bytes exact: no filter, no eol conversion
    assert tree_digest(project / ".git") == before_git
    assert not marker.exists()
    assert git(project, "stash", "list").count("\n") == 1


def test_a_file_not_stored_is_never_replaced_or_removed(project: Path, tmp_path: Path) -> None:
    d = Driver(project, tmp_path / "data")
    d.cp.settings = Settings.from_opts({"max_file_mb": 0.001})  # ~1 KB
    d.turn()
    d.tool_round({"huge.log": b"x" * 5000, "a.py": b"chat\n"})
    plan = d.rewind(1, take_conflicts=True)
    assert plan.unrestorable == ["huge.log"]
    assert (project / "huge.log").read_bytes() == b"x" * 5000  # no undo could bring it back
    assert (project / "a.py").read_bytes() == b"a = 1\n"


def test_a_project_past_the_file_count_gets_no_partial_checkpoint(
    project: Path, tmp_path: Path
) -> None:
    from codecompanion.checkpoints.scan import TooManyFiles

    cp = Checkpoints(tmp_path / "data", Settings.from_opts({"max_files": 2}))
    with pytest.raises(TooManyFiles):
        cp.record("c", project, "turn", "user")
    assert cp.journal("c", project).records == []


def test_review_reverts_one_hunk_or_the_whole_file_and_undo_brings_it_back(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    write(project, {"r.txt": b"1\n2\n3\n4\n5\n6\n7\n8\n"})
    d.turn()
    d.tool_round({"r.txt": b"ONE\n2\n3\n4\n5\n6\n7\nEIGHT\n"})

    def revert(hunk: int | None) -> None:
        planned = d.cp.plan_revert(d.chat, project, 1, "r.txt", hunk)
        assert planned is not None
        _before, _base, plan = planned
        outcome = d.cp.restore(d.chat, project, plan.restore, Progress("rewound", 1, {}))
        assert outcome.done == ["r.txt"] and not outcome.failed

    changes = d.cp.changes(d.chat, project, 1)
    assert [len(c.hunks) for c in changes] == [2]
    revert(1)  # the second hunk only
    assert (project / "r.txt").read_bytes() == b"ONE\n2\n3\n4\n5\n6\n7\n8\n"
    d.undo()
    assert (project / "r.txt").read_bytes() == b"ONE\n2\n3\n4\n5\n6\n7\nEIGHT\n"
    revert(None)
    assert (project / "r.txt").read_bytes() == b"1\n2\n3\n4\n5\n6\n7\n8\n"
    assert d.cp.plan_revert(d.chat, project, 1, "r.txt", None) is None  # nothing left
    assert d.cp.changes(d.chat, project, 1) == []


def test_a_first_capture_is_one_pack_and_pruning_rewrites_what_a_pack_still_holds(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecompanion.checkpoints import store as store_module

    monkeypatch.setattr(store_module, "PACK_MIN", 4)
    data = tmp_path / "data"
    for n in range(10):
        write(project, {f"many/f{n}.txt": f"{n}\n".encode() * 50})
    d = Driver(project, data)
    d.turn()
    assert len(list((data / "packs").glob("*.pack"))) == 1
    assert not (data / "objects").exists() or not any((data / "objects").iterdir())
    d.tool_round({"many/f1.txt": b"changed\n", "a.py": None})
    d.rewind(1, take_conflicts=True)
    assert (project / "many/f1.txt").read_bytes() == b"1\n" * 50
    assert (project / "a.py").read_bytes() == b"a = 1\n"
    # Only the first chat's objects stay: the pack is written anew with them.
    keep = d.cp.store.reachable([d.cp.journal(d.chat, project).records[0].tree])
    d.cp.store.sweep(keep)
    fresh = ObjectStore(data)  # as after a restart: indexes read from disk
    for oid in keep:
        fresh.get(oid)
    assert set(fresh._pack_index()) <= keep  # noqa: SLF001


CHANGES: list[tuple[str, Any]] = [
    ("a file's bytes", lambda root: (root / "keep/u.txt").write_bytes(b"user, edited\n")),
    ("a file's mode", lambda root: (root / "a.py").chmod(0o600)),
    ("a folder's mode", lambda root: (root / "keep/deep").chmod(0o700)),
    ("a new file", lambda root: (root / "keep/new.txt").write_bytes(b"")),
    ("a new folder", lambda root: (root / "keep/sub").mkdir()),
    ("a removed file", lambda root: (root / "b.py").unlink()),
    ("a renamed file", lambda root: (root / "b.py").rename(root / "c.py")),
    ("a file made a link", lambda root: _relink(root / "a.py", "b.py")),
    ("a folder made a link", lambda root: _relink(root / "keep", "deep")),
    ("a file swapped in by rename", lambda root: _swap(root / "keep/u.txt")),
]


def _relink(path: Path, target: str) -> None:
    if path.is_dir():
        path.rename(path.with_name("moved"))
    else:
        path.unlink()
    path.symlink_to(target)


def _swap(path: Path) -> None:
    """The same bytes, size and times, in a new file renamed over the old one."""
    info = path.stat()
    fresh = path.with_name(".swap")
    fresh.write_bytes(path.read_bytes())
    os.utime(fresh, ns=(info.st_atime_ns, info.st_mtime_ns))
    fresh.replace(path)


@pytest.mark.parametrize(("what", "change"), CHANGES, ids=[c[0] for c in CHANGES])
def test_an_unchanged_project_is_told_by_a_stat_walk_and_any_change_is_seen(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, change: Any
) -> None:
    # Files and folders written moments ago count as settled (else they are walked anew).
    monkeypatch.setattr(scan, "RACY_NS", 0)
    write(project, {"keep/deep/d.txt": b"d\n", "node_modules/x.js": b"x\n"})
    store = ObjectStore(tmp_path / "data")
    limits = ScanLimits()
    result, cache = capture(project, store, ScanCache(), limits)
    assert scan.unchanged(project, cache, limits) == result.tree
    # Its folders are not listed again while their own stat is as recorded.
    listed: list[str] = []
    listdir = os.listdir

    def noted(path: Any) -> list[str]:
        listed.append(str(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", noted)
    assert scan.unchanged(project, cache, limits) == result.tree and listed == []
    (project / "node_modules/y.js").write_bytes(b"y\n")  # excluded: no change to a capture
    assert scan.unchanged(project, cache, limits) == result.tree
    change(project)
    assert scan.unchanged(project, cache, limits) is None, what
    again, _ = capture(project, store, cache, limits)
    assert again.tree != result.tree, what  # the capture the walk defers to sees it too


def test_a_path_changed_after_the_plan_is_not_written_but_reported_moved(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\n", "b.py": b"chat\n"})
    planned = d.cp.plan(d.chat, project, 1)
    assert planned is not None
    plan = planned[2]
    write(project, {"a.py": b"saved while asked\n"})  # after the plan, before the write
    outcome = d.cp.restore(d.chat, project, plan.restore, Progress("rewound", 1, {}))
    assert outcome.done == ["b.py"]
    assert [(m.path, m.current and d.cp.read(m.current.oid)) for m in outcome.moved] == [
        ("a.py", b"saved while asked\n")
    ]
    assert (project / "a.py").read_bytes() == b"saved while asked\n"
    assert sorted(p.name for p in project.iterdir()) == ["a.py", "b.py", "keep"]  # no aside left
    # Asked again and taken: written now, and the undo brings the saved bytes back.
    outcome = d.cp.restore(d.chat, project, outcome.moved, Progress("rewound", 1, {}))
    assert outcome.done == ["a.py"] and (project / "a.py").read_bytes() == b"a = 1\n"
    d.undo()
    assert (project / "a.py").read_bytes() == b"saved while asked\n"


def test_a_crafted_undo_writes_nothing_a_capture_could_not_hold(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\n"})
    d.rewind(1, take_conflicts=True)
    hook = d.cp.store.put(b"#!/bin/sh\n")[0]
    entry = ["f", 0o755, 10, 0, 0, 0, hook]
    journal = d.cp.journal(d.chat, project)
    rewound = next(r for r in journal.records if r.kind == "rewound")
    for bad in (".git/hooks/post-checkout", "../outside", "sub/./x", "node_modules/x"):
        rewound.rewind["replaced"][bad] = entry
        rewound.rewind["wrote"][bad] = None
    rewound.rewind["replaced"]["odd"] = ["f", 0o644, 1, 0, 0, 0, "../../../../etc/passwd"]
    planned = d.cp.plan_undo(d.chat, project)
    assert planned is not None
    plan = planned[2]
    assert [line.split(":")[0] for line in plan.refused] == [
        "../outside",
        ".git/hooks/post-checkout",
        "node_modules/x",
        "odd",
        "sub/./x",
    ]
    assert [i.path for i in plan.restore] == ["a.py"]
    assert not (project / ".git").exists() and not (tmp_path / "outside").exists()


def test_a_rewind_saved_before_its_writes_were_kept_is_undone_from_its_trees(
    project: Path, tmp_path: Path
) -> None:
    """A rewind's record as saved before each write's take was kept: its paths and the tree
    captured before it. The undo puts back what that tree holds, checked as any undo."""
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.tool_round({"a.py": b"chat\n", "new/c.py": b"c\n", "b.py": None})
    after = state(project)
    d.rewind(1, take_conflicts=False)
    journal = d.cp.journal(d.chat, project)
    rewound = next(r for r in journal.records if r.kind == "rewound")
    del rewound.rewind["replaced"], rewound.rewind["wrote"]
    assert sorted(rewound.rewind["written"]) == ["a.py", "b.py", "new", "new/c.py"]
    rewound.rewind["written"].append(".git/hooks/post-checkout")  # as a crafted one would

    plan = d.undo()

    assert state(project) == after
    assert sorted(item.path for item in plan.restore) == ["a.py", "b.py", "new", "new/c.py"]
    assert not (project / ".git").exists()  # no tree holds it: nothing to write there


def _change(before: bytes | None, after: bytes | None) -> Any:
    from codecompanion.checkpoints.changes import file_change
    from codecompanion.checkpoints.store import Entry

    texts = {"old": before, "new": after}
    entry = {k: Entry("f", 0o644, len(v), 0, 0, 0, k) for k, v in texts.items() if v is not None}
    return file_change(
        "f.txt", entry.get("old"), entry.get("new"), lambda e: texts[e.oid] if e else None
    )


def test_line_counts_are_the_lines_a_reader_counts() -> None:
    made = _change(None, b"one\ntwo\nthree\n")
    assert (made.added, made.removed, made.short()) == (3, 0, "f.txt (new) +3")
    assert _change(b"a\nb\n", None).short() == "f.txt (deleted) −2"
    assert _change(b"a\nb\n", b"a\nB\n").short() == "f.txt +1 −1"
    assert _change(b"a", b"a\nb\n").short() == "f.txt +1"  # no line from the final newline


@pytest.mark.parametrize(
    ("before", "after", "hunk", "back"),
    [
        (b"one\ntwo\nthree\n", b"ONE\ntwo\nTHREE\n", 1, b"ONE\ntwo\nthree\n"),
        (b"one\ntwo", b"one\nTWO\n", 0, b"one\ntwo"),  # the old last line had no newline
        (b"one\ntwo\n", b"ONE\ntwo", 0, b"one\ntwo"),  # the hunk is not at the end: new's
    ],
)
def test_reverting_a_hunk_keeps_the_final_newline_of_the_text_it_comes_from(
    before: bytes, after: bytes, hunk: int, back: bytes
) -> None:
    assert _change(before, after).reverted(hunk) == back
