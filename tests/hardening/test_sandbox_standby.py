"""The chat's waiting launcher (sandbox/standby.py): a command becomes the launcher that waited
for it and is confined all the same; a killed one is replaced, never bypassed; settings reach
the next command; closing the chat ends the launcher and its cgroup; a new chat's first
launcher was made ready before the chat opened; the probe needs neither ctypes nor a thread in
the host."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codecompanion.sandbox.cgroup import PidCgroup
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector, detect
from codecompanion.sandbox.settings import read_permissions
from codecompanion.sandbox.standby import native_launcher
from codecompanion.tools.runtime.child_env import RUN_MARKER
from codecompanion.tools.runtime.descendants import marked
from codecompanion.tools.runtime.process import FinishedProcess, run_process
from codecompanion.workspace import HostOptions, Workspace
from tests.support.nvim import wait_for
from tests.support.sessions import command_session

FOUND = detect()
pytestmark = pytest.mark.skipif(
    FOUND.kind != "landlock" or not FOUND.mounts or native_launcher() is None,
    reason=f"no full sandbox with the native launcher here: {FOUND.reason}",
)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    return project, outside


@pytest.fixture
def sandbox() -> Iterator[CommandSandbox]:
    """A chat's sandbox with its launcher waiting; closed after the test."""
    made = CommandSandbox(read_permissions({}), Detector())
    try:
        made.prepare()
        yield made
    finally:
        made.close()


def _spare(sandbox: CommandSandbox) -> int:
    standbys = sandbox._standbys
    assert standbys is not None and standbys.spare is not None
    return standbys.spare


async def _sh(sandbox: CommandSandbox, project: Path, line: str) -> FinishedProcess:
    launch = sandbox.launch(project)
    assert launch is not None and launch.native is not None
    return await run_process(["sh", "-c", line], cwd=project, sandbox=launch)


async def test_a_command_becomes_the_waiting_launcher_and_is_confined(
    places: tuple[Path, Path], sandbox: CommandSandbox
) -> None:
    project, outside = places
    waiting = _spare(sandbox)
    result = await _sh(sandbox, project, f"echo $$; echo x > {outside}/w.txt")
    assert result.stdout.split() == [str(waiting)]  # the same process, now the command
    assert result.exit_code == 2 and not (outside / "w.txt").exists(), result.stderr
    assert _spare(sandbox) != waiting  # the next one was started
    result = await _sh(sandbox, project, "echo ok > inside.txt && cat .git/../inside.txt")
    assert result.exit_code == 0 and result.stdout == "ok\n", result.stderr


async def test_a_killed_launcher_is_replaced_never_bypassed(
    places: tuple[Path, Path], sandbox: CommandSandbox
) -> None:
    project, outside = places
    waiting = _spare(sandbox)
    os.kill(waiting, signal.SIGKILL)
    stat = Path(f"/proc/{waiting}/stat")
    wait_for(lambda: stat.read_text().rsplit(")", 1)[1].split()[0] == "Z", timeout=5)
    result = await _sh(sandbox, project, f"echo $$; echo x > {outside}/k.txt")
    assert result.started and result.stdout.split() != [str(waiting)]
    assert result.exit_code == 2 and not (outside / "k.txt").exists(), result.stderr


async def test_changed_settings_reach_the_next_command(
    places: tuple[Path, Path], sandbox: CommandSandbox
) -> None:
    project, outside = places
    line = f"echo x > {outside}/s.txt"
    assert (await _sh(sandbox, project, line)).exit_code == 2
    sandbox.permissions = replace(sandbox.permissions, writable=(str(outside),))
    result = await _sh(sandbox, project, line)
    assert result.exit_code == 0 and (outside / "s.txt").exists(), result.stderr
    secret = outside / "secret.txt"
    secret.write_text("hidden")
    denied = (*sandbox.permissions.deny_read, str(secret))
    sandbox.permissions = replace(sandbox.permissions, deny_read=denied)
    result = await _sh(sandbox, project, f"cat {secret}")
    assert "hidden" not in result.stdout


async def test_closing_the_chat_ends_its_launcher_and_cgroup(places: tuple[Path, Path]) -> None:
    project, _outside = places
    sandbox = CommandSandbox(read_permissions({}), Detector())
    sandbox.prepare()
    assert (await _sh(sandbox, project, "true")).exit_code == 0
    waiting = _spare(sandbox)
    cgroup = sandbox._cgroup
    sandbox.close()
    for _ in range(250):  # killed at once, reaped from the loop
        if not Path(f"/proc/{waiting}").exists():
            break
        await asyncio.sleep(0.02)
    assert not Path(f"/proc/{waiting}").exists()
    assert cgroup is None or not Path(cgroup.folder).exists()


async def test_a_new_chats_first_launcher_was_ready_before_the_chat_opened(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    project, outside = places
    workspace = Workspace(HostOptions(data_dir=str(tmp_path / "data")))
    first = workspace.command_sandbox()
    first.prepare()  # the first chat opens: the next chat's launcher starts too
    reserve = workspace._reserve
    assert reserve is not None and reserve._kit is not None
    made_ready = reserve._kit.standbys.spare
    assert made_ready is not None and made_ready != _spare(first)
    second = workspace.command_sandbox()
    try:
        second.prepare()  # the second chat opens: it takes that launcher
        assert _spare(second) == made_ready
        result = await _sh(second, project, f"echo $$; echo x > {outside}/r.txt")
        assert result.stdout.split() == [str(made_ready)]
        assert result.exit_code == 2 and not (outside / "r.txt").exists(), result.stderr
        own = [s._cgroup.folder for s in (first, second) if s._cgroup is not None]
        assert len(set(own)) == len(own)  # each chat still has its own cgroup
        next_ready = reserve._kit.standbys.spare if reserve._kit is not None else None
        assert next_ready is not None and next_ready not in (made_ready, _spare(second))
    finally:
        first.close()
        second.close()
        workspace.close()  # the host exits: the launcher made ready for a third chat ends too
    wait_for(lambda: not Path(f"/proc/{next_ready}").exists(), timeout=5)


def test_a_confined_runs_marker_sweep_reads_its_cgroup_only() -> None:
    cgroup = PidCgroup.make(64)
    if cgroup is None:
        pytest.skip("no pids cgroup can be made here")
    env = {**os.environ, RUN_MARKER: "host.run1"}
    inside = subprocess.Popen(["sleep", "30"], env=env)
    outside = subprocess.Popen(["sleep", "30"], env=env)  # marked the same, elsewhere
    try:
        os.write(cgroup.procs, str(inside.pid).encode())
        assert cgroup.members() == [inside.pid] and cgroup.members(spare=inside.pid) == []
        assert marked("host.run1", among=cgroup.members) == [inside.pid]
        assert {inside.pid, outside.pid} <= set(marked("host.run1"))  # unknown: all of /proc
    finally:
        for proc in (inside, outside):
            proc.kill()
            proc.wait()
        cgroup.close()


PROBE = """
import asyncio, json, sys, threading
from codecompanion.sandbox.probe import Detector
detector = Detector()
asyncio.run(detector.probe())
found = detector()
print(json.dumps([found.kind, found.mounts, "ctypes" in sys.modules, threading.active_count()]))
"""


def test_the_probe_needs_no_ctypes_nor_a_thread_in_the_host() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    kind, mounts, ctypes_loaded, threads = json.loads(out.stdout.splitlines()[-1])
    assert (kind, mounts) == ("landlock", True)
    assert not ctypes_loaded and threads == 1


PRIORITY = """
import asyncio, os, sys
from pathlib import Path
from codecompanion.sandbox.cgroup import PidCgroup
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.settings import Permissions
from codecompanion.tools.runtime.process import run_process

async def main():
    sandbox = CommandSandbox(Permissions(), Detector())
    await sandbox.probe()
    sandbox.prepare()
    argv = ['sh', '-c', 'ps -o sid= -p $$; cat /proc/self/autogroup']
    result = await run_process(argv, cwd='.', timeout=10, sandbox=sandbox.launch(Path.cwd()))
    sandbox.close()
    print(os.getsid(0), result.stdout)

asyncio.run(main())
"""


def test_a_confined_command_gets_the_hosts_cpu_priority(tmp_path: Path) -> None:
    # The waiting launcher starts a session of its own (a scheduling group of its own): the
    # command it becomes must not fall back to nice 0 beside a host at nice 4.
    (tmp_path / ".git").mkdir()
    host_sid, command_sid, group = command_session(PRIORITY, tmp_path, nice=4)
    assert host_sid != command_sid
    assert group.endswith("nice 4"), group
