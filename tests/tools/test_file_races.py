"""Race-free confinement: a process swapping a project folder for a link to an outside folder
never lets a file tool read, write, create or delete outside the project.

A real second process swaps the folder `sub` with a symbolic link to the outside folder
(renameat2 RENAME_EXCHANGE: one atomic step, so `sub` always exists) every 300 µs, while one
tool is called again and again with a path through `sub`. A path checked while `sub` is the
folder and opened while it is the link used to reach the outside file. Each run is bounded by a
call count and a time cap; the test asserts zero escapes (outside text in a result, or any
outside file changed, created or deleted) and that the race really happened.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codecompanion.ports import Diagnostic
from codecompanion.tools.builtin import (
    create_file,
    delete_file,
    get_diagnostics,
    grep_search,
    insert_edit_into_file,
    read_file,
)
from tests.support.builtin import FakeTools, Outcome, run_tool
from tests.support.fakes import FakeEditor

SECRET = "outside secret: do not read"
SWAPPER = """
import ctypes, os, sys, time
sub, link, outside = sys.argv[1], sys.argv[1] + ".link", sys.argv[2]
end = time.monotonic() + float(sys.argv[3])
hold = float(sys.argv[4]) / 1e6  # seconds in each state
os.symlink(outside, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
started = False
while time.monotonic() < end:
    # One atomic step: `sub` is always there, alternately the folder and the link.
    if libc.renameat2(AT_FDCWD, sub.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE):
        print("unsupported:", os.strerror(ctypes.get_errno()), flush=True)
        sys.exit(1)
    if not started:
        print("ready", flush=True)
        started = True
    until = time.perf_counter() + hold
    while time.perf_counter() < until:
        pass
"""
HOLD_US = 300  # how long `sub` stays the folder, then the link
CALLS = 2000  # per test, or as many as SECONDS allow
SECONDS = 5.0
SCANNED = 100  # files each grep call reads


@dataclass
class Race:
    """A project whose `sub` folder a second process keeps swapping for a link to `outside`."""

    root: Path
    outside: Path
    tally: dict[str, int] = field(default_factory=lambda: {"success": 0, "error": 0, "escaped": 0})

    def outside_state(self) -> dict[str, str]:
        """Every outside file and its text."""
        return {p.name: p.read_text() for p in sorted(self.outside.iterdir())}


@pytest.fixture
def race(tmp_path: Path) -> Race:
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    root = (tmp_path / "project").resolve()
    (root / "sub").mkdir(parents=True)
    for folder, text in ((root / "sub", "inside line\n"), (outside, SECRET + "\n")):
        (folder / "r.txt").write_text(text)
        (folder / "e.txt").write_text("same\n")
        for i in range(SCANNED):
            (folder / f"g{i}.txt").write_text(text)
    return Race(root, outside)


async def _hammer(race: Race, call: Any) -> int:
    """Call `call(i)` up to CALLS times (or SECONDS) while the swapper runs; the calls made."""
    sub, limit = str(race.root / "sub"), "60"  # the swapper also stops by itself
    argv = [sys.executable, "-c", SWAPPER, sub, str(race.outside), limit, str(HOLD_US)]
    swapper = subprocess.Popen(argv, stdout=subprocess.PIPE)
    made = 0
    try:
        assert swapper.stdout is not None
        first = swapper.stdout.readline()
        if first != b"ready\n":  # no renameat2 (not Linux) or a file system without exchange
            pytest.skip(f"cannot swap a folder and a link atomically here: {first!r}")
        end = time.monotonic() + SECONDS
        while made < CALLS and time.monotonic() < end:
            outcome: Outcome = await call(made)
            race.tally[outcome.status] += 1
            race.tally["escaped"] += SECRET in outcome.for_llm
            made += 1
        return made
    finally:
        swapper.kill()
        swapper.wait()
        swapper.stdout.close()
        assert swapper.returncode == -9 or not made, swapper.returncode  # it ran until killed
        if (race.root / "sub").is_symlink():
            (race.root / "sub").unlink()
            (race.root / "sub.link").rename(race.root / "sub")


def _tools(race: Race, editor: FakeEditor | None = None) -> FakeTools:
    return FakeTools(cwd=race.root, editor=editor)


async def _check(
    race: Race, module: ModuleType, args: Any, editor: FakeEditor | None = None
) -> None:
    before = race.outside_state()
    tools = _tools(race, editor)
    made = await _hammer(race, lambda i: run_tool(module, args(i), tools, approved=True))
    after = race.outside_state()
    changed = [name for name in before.keys() | after.keys() if before.get(name) != after.get(name)]
    assert (changed, race.tally["escaped"]) == ([], 0), (made, race.tally, len(changed))
    assert race.tally["success"] and race.tally["error"], (made, race.tally)


async def test_read_file_never_returns_an_outside_file(race: Race) -> None:
    args = {"filepath": "sub/r.txt", "start_line_number_base_zero": 0,
            "end_line_number_base_zero": -1}  # fmt: skip
    await _check(race, read_file, lambda _i: args)


async def test_an_edit_never_writes_outside(race: Race) -> None:
    def args(i: int) -> dict[str, Any]:
        edit = [{"oldText": "", "newText": f"edited {i}\n", "replaceAll": None}]
        return {"filepath": "sub/e.txt", "edits": edit, "explanation": "x", "mode": "overwrite"}

    await _check(race, insert_edit_into_file, args)


async def test_create_file_never_creates_outside(race: Race) -> None:
    await _check(race, create_file, lambda i: {"filepath": f"sub/n{i}.txt", "content": "new\n"})


async def test_delete_file_never_deletes_outside(race: Race) -> None:
    for folder, text in ((race.root / "sub", "inside\n"), (race.outside, SECRET + "\n")):
        for i in range(CALLS):
            (folder / f"d{i}.txt").write_text(text)
    await _check(race, delete_file, lambda i: {"filepath": f"sub/d{i}.txt"})


async def test_grep_fallback_never_reads_outside(race: Race) -> None:
    args = {"query": "side", "is_regexp": None, "include_pattern": "sub/g*.txt",
            "max_results": None}  # fmt: skip
    tools = _tools(race)
    found = 0

    async def call(_i: int) -> Outcome:
        nonlocal found
        outcome = await run_tool(grep_search, args, tools, opts={"rg_path": False})
        found += "inside line" in outcome.for_llm
        return outcome

    made = await _hammer(race, call)
    assert race.tally["escaped"] == 0 and 0 < found < made, (made, found, race.tally)


async def test_get_diagnostics_never_shows_outside_lines(race: Race) -> None:
    path = str(race.root / "sub" / "r.txt")
    editor = FakeEditor(diagnostic_map={path: [Diagnostic(0, 0, "ERROR", "bad")]})
    await _check(race, get_diagnostics, lambda _i: {"filepath": "sub/r.txt", "severity": None},
                 editor)  # fmt: skip
