"""Folders' modes in checkpoints, in a real folder with a real shell: a rewind gives a folder the
mode it had (one the chat changed, one it removed), the undo takes it back, never through a
link, and checkpoints captured before folders had modes restore as they did."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codecompanion.checkpoints.changes import changed_paths
from codecompanion.checkpoints.restore import Restore, apply
from codecompanion.checkpoints.scan import ScanCache, ScanLimits, capture
from codecompanion.checkpoints.store import ObjectStore, folder_entry, rows_of
from tests.support.checkpoints import Driver, shape, write


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root, {"a.py": b"a = 1\n", "sub/x.txt": b"x\n", "sub/inner/y.txt": b"y\n"})
    for folder in (root / "sub", root / "sub" / "inner"):
        folder.chmod(0o755)
    return root


def test_a_command_that_chmods_a_folder_is_rewound_and_undone(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.shell_round("chmod 700 sub && chmod 711 sub/inner && echo 'a = 2' > a.py")
    after = shape(project)

    plan = d.rewind(1, take_conflicts=False)

    assert sorted(item.path for item in plan.restore) == ["a.py", "sub", "sub/inner"]
    assert (mode(project / "sub"), mode(project / "sub" / "inner")) == (0o755, 0o755)
    assert (project / "a.py").read_bytes() == b"a = 1\n"
    d.undo()
    assert shape(project) == after
    assert mode(project / "sub") == 0o700


def test_a_removed_folder_comes_back_with_its_mode(project: Path, tmp_path: Path) -> None:
    (project / "sub").chmod(0o750)
    (project / "sub" / "inner").chmod(0o710)
    before = shape(project)
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.shell_round("rm -r sub")
    after = shape(project)

    d.rewind(1, take_conflicts=False)

    assert shape(project) == before
    assert (mode(project / "sub"), mode(project / "sub" / "inner")) == (0o750, 0o710)
    d.undo()
    assert shape(project) == after


def test_a_folder_shutting_its_owner_out_gets_its_mode_after_its_files(
    project: Path, tmp_path: Path
) -> None:
    (project / "sub" / "inner").chmod(0o500)
    (project / "sub").chmod(0o555)
    before = shape(project)
    d = Driver(project, tmp_path / "data")
    d.turn()
    d.shell_round("chmod -R u+w sub && rm -r sub")

    d.rewind(1, take_conflicts=False)

    assert shape(project) == before  # the files written first, the modes given after
    (project / "sub").chmod(0o755)
    (project / "sub" / "inner").chmod(0o755)  # for the clean-up of a user who is not root


def test_the_same_for_root_held_to_modes_as_any_user(tmp_path: Path) -> None:
    """Root writes into a folder whatever its mode: the test above runs again without root's
    override of permissions (as every other user runs it), so a write it makes into a folder
    that shuts its owner out fails there."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("not root: the test above is held to modes already")
    if subprocess.run([*drop, "true"], check=False).returncode != 0:
        pytest.skip("this root cannot drop its capabilities")
    test = (
        f"{__file__}::{test_a_folder_shutting_its_owner_out_gets_its_mode_after_its_files.__name__}"
    )
    run = subprocess.run(
        [*drop, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert "1 passed" in run.stdout


def test_a_folder_the_user_chmods_is_left_as_the_user_made_it(
    project: Path, tmp_path: Path
) -> None:
    d = Driver(project, tmp_path / "data")
    d.turn()
    (project / "sub").chmod(0o700)  # by hand, between turns
    d.shell_round("echo 'a = 2' > a.py")

    plan = d.rewind(1, take_conflicts=False)

    assert [item.path for item in plan.restore] == ["a.py"]
    assert mode(project / "sub") == 0o700


def test_a_capture_keeps_a_folders_mode_and_sees_it_alone_change(
    project: Path, tmp_path: Path
) -> None:
    store = ObjectStore(tmp_path / "store")
    first, cache = capture(project, store, ScanCache(), ScanLimits())
    (project / "sub" / "inner").chmod(0o700)

    second, _ = capture(project, store, cache, ScanLimits())

    assert changed_paths(store, first.tree, second.tree, folders=True) == {"sub/inner"}
    assert changed_paths(store, first.tree, second.tree) == set()  # no file changed
    inner = store.node(second.tree, "sub/inner")
    assert inner is not None and inner.mode == stat.S_IFDIR | 0o700


def test_a_folder_mode_is_never_set_through_a_link(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    for folder in (outside, outside / "inner"):
        folder.chmod(0o700)
    (project / "link").symlink_to(outside)
    store = ObjectStore(tmp_path / "store")
    tree = capture(project, store, ScanCache(), ScanLimits())[0].tree
    was, wanted = folder_entry(tree, stat.S_IFDIR | 0o700), folder_entry(tree, stat.S_IFDIR | 0o755)
    (project / "sub").rename(project / "gone")
    (project / "sub").symlink_to(outside)  # the folder swapped for a link after the plan

    outcome = apply(
        project, store, [Restore("sub", wanted, was), Restore("link/inner", wanted, was)]
    )

    assert [item.path for item in outcome.moved] == ["sub"]
    assert [line.split(":")[0] for line in outcome.failed] == ["link/inner"]
    assert (mode(outside), mode(outside / "inner")) == (0o700, 0o700)


def test_checkpoints_taken_before_folders_had_modes_restore_as_before(
    project: Path, tmp_path: Path
) -> None:
    """Trees whose folder rows hold mode 0 (as captures made them before): a folder's mode is
    not known, so it is left as it is, and a folder made again gets the default one."""
    d = Driver(project, tmp_path / "data")
    d.turn()
    journal = d.cp.journal(d.chat, project)
    old = _without_folder_modes(d.cp.store, journal.records[-1].tree)
    journal.records[-1].tree = old
    d.shell_round("chmod 700 sub && rm -r sub/inner && echo 'a = 2' > a.py")
    after = shape(project)
    new = journal.records[-1].tree
    assert changed_paths(d.cp.store, old, new, folders=True) == {
        "a.py", "sub/inner", "sub/inner/y.txt"
    }  # fmt: skip

    d.rewind(1, take_conflicts=False)

    assert mode(project / "sub") == 0o700  # not known then: left
    assert mode(project / "sub" / "inner") == 0o777 & ~_umask()
    assert (project / "sub" / "inner" / "y.txt").read_bytes() == b"y\n"
    d.undo()
    assert shape(project) == after


def _without_folder_modes(store: ObjectStore, oid: str) -> str:
    """The tree as a capture made before folder modes would have stored it."""
    tree = dict(store.tree(oid))
    for name, item in tree.items():
        if item.kind == "d":
            tree[name] = folder_entry(_without_folder_modes(store, item.oid), 0)
    return store.put_tree(rows_of(tree))[0]


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
