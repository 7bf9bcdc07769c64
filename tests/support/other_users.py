"""Folders a test shares with another user it runs code as (setpriv, a forked child that drops
to `nobody`): pytest's own folders are private, and the temporary folder itself may be too (a CI
that points TMPDIR into a `mktemp -d` folder, a clone inside one)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def reachable_by_all(folder: Path) -> bool:
    """Whether every folder from the root down to `folder` lets any user pass through it."""
    for part in (folder, *folder.parents):
        try:
            if not part.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


@contextmanager
def shared_folder(prefix: str, mode: int = 0o777) -> Iterator[Path]:
    """A new folder with `mode` that any user can reach, removed afterwards; skips the test
    when no temporary place on this machine is reachable by everyone."""
    places = (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
    open_places = (p.resolve() for p in places if p.is_dir())
    place = next((p for p in open_places if reachable_by_all(p)), None)
    if place is None:
        pytest.skip("no temporary folder here that another user can reach")
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=place))
    folder.chmod(mode)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copy_package(source: Path, into: Path) -> Path:
    """A readable copy of a Python package folder's parent for PYTHONPATH (the checkout may sit in
    a folder only its owner can enter); returns the folder to put on the path."""
    target = into / "pythonpath"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for root, dirs, files in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return target
