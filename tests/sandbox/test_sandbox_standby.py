"""The chat's waiting launcher (sandbox/standby.py): a command becomes the launcher that waited
for it and is confined all the same; a killed one is replaced, never bypassed; settings reach
the next command; closing the chat ends the launcher and its cgroup; a new chat's first
launcher was made ready before the chat opened; the probe needs neither ctypes nor a thread in
the host."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codecompanion.sandbox import rulebook
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector, detect
from codecompanion.sandbox.settings import read_permissions
from codecompanion.sandbox.standby import Order, Standby, native_launcher
from codecompanion.tools.runtime import process
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


@pytest.fixture
def prepared(places: tuple[Path, Path]) -> Iterator[CommandSandbox]:
    """A chat's sandbox that knows its project: its launchers confine themselves ahead."""
    made = CommandSandbox(read_permissions({}), Detector(), project=places[0])
    try:
        made.prepare()
        yield made
    finally:
        made.close()


def _confined(pid: int) -> bool:
    """True once `pid` has set no_new_privs and loaded a seccomp filter."""
    status = Path(f"/proc/{pid}/status").read_text()
    return "\nNoNewPrivs:\t1\n" in status and "\nSeccomp:\t2\n" in status


async def _next_spare(sandbox: CommandSandbox) -> int:
    """The launcher waiting after a command: started shortly after the command was executed."""
    for _ in range(250):
        standbys = sandbox._standbys
        if standbys is not None and standbys.spare is not None:
            return standbys.spare
        await asyncio.sleep(0.02)
    return _spare(sandbox)


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
    assert await _next_spare(sandbox) != waiting  # the next one was started
    result = await _sh(sandbox, project, "echo ok > inside.txt && cat .git/../inside.txt")
    assert result.exit_code == 0 and result.stdout == "ok\n", result.stderr


async def test_the_waiting_launcher_is_confined_before_its_command_comes(
    places: tuple[Path, Path], prepared: CommandSandbox
) -> None:
    project, outside = places
    waiting = _spare(prepared)
    wait_for(lambda: _confined(waiting), timeout=5)  # no command was handed to it yet
    line = f"echo $$; echo x > {outside}/w.txt; echo x > .git/config; echo ok > in.txt"
    result = await _sh(prepared, project, line)
    assert result.stdout.split() == [str(waiting)]  # that launcher became the command
    assert not (outside / "w.txt").exists() and not (project / ".git" / "config").exists()
    assert (project / "in.txt").read_text() == "ok\n", result.stderr
    following = await _next_spare(prepared)
    for _ in range(250):  # confined as soon as it started, before any command
        if _confined(following):
            break
        await asyncio.sleep(0.02)
    assert _confined(following)


async def test_a_launcher_confined_before_the_files_changed_is_not_used(
    tmp_path: Path,
) -> None:
    project, secret = tmp_path / "project", tmp_path / "later.txt"
    project.mkdir()  # no .git yet, and the secret does not exist yet
    permissions = read_permissions({"deny_read": [str(secret)]})
    sandbox = CommandSandbox(permissions, Detector(), project=project)
    try:
        sandbox.prepare()
        waiting = _spare(sandbox)
        wait_for(lambda: _confined(waiting), timeout=5)
        (project / ".git").mkdir()
        secret.write_text("hidden")
        line = f"echo $$; cat {secret}; echo x > .git/config"
        result = await _sh(sandbox, project, line)
        assert result.stdout.split()[0] != str(waiting)  # a fresh launcher, told both at once
        assert "hidden" not in result.stdout and not (project / ".git" / "config").exists()
    finally:
        sandbox.close()


async def test_a_chats_rules_are_worked_out_again_only_when_their_places_change(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, outside = places
    secret = outside / "secret.txt"
    permissions = read_permissions({"deny_read": [str(secret)]})
    sandbox = CommandSandbox(permissions, Detector(), project=project)
    worked_out: list[Path] = []
    view_of = rulebook.view_of
    monkeypatch.setattr(rulebook, "view_of", lambda b: worked_out.append(b.project) or view_of(b))
    try:
        sandbox.prepare()
        for _ in range(2):
            assert (await _sh(sandbox, project, "true")).exit_code == 0
        assert worked_out == [project]  # once, when the chat opened
        secret.write_text("hidden")
        result = await _sh(sandbox, project, f"cat {secret}")
        assert worked_out == [project, project] and "hidden" not in result.stdout
    finally:
        sandbox.close()


async def test_the_next_launcher_starts_once_the_command_runs(
    places: tuple[Path, Path], prepared: CommandSandbox
) -> None:
    project, _outside = places
    launch = prepared.launch(project)
    assert launch is not None and prepared._standbys is not None
    env = {"PATH": os.environ["PATH"]}
    popen = launch.begin(("sleep", "5"), str(project), env, subprocess.DEVNULL)
    launch.go()
    try:
        assert prepared._standbys.spare is None  # nothing else starts while it is handed over
        for _ in range(250):
            if prepared._standbys.spare is not None:
                break
            await asyncio.sleep(0.02)
        assert prepared._standbys.spare is not None
        assert os.path.basename(os.readlink(f"/proc/{popen.pid}/exe")) == "sleep"
    finally:
        launch.close()
        popen.wait(5)
        for stream in (popen.stdout, popen.stderr):
            if stream is not None:
                stream.close()


async def test_the_private_temp_folder_is_removed_off_the_loop(
    places: tuple[Path, Path], prepared: CommandSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _outside = places
    removed: list[tuple[str, bool]] = []
    remove = shutil.rmtree

    def recorded(path: str, ignore_errors: bool = False) -> None:
        removed.append((path, threading.current_thread() is threading.main_thread()))
        remove(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(shutil, "rmtree", recorded)
    result = await _sh(prepared, project, 'echo "$TMPDIR"; touch "$TMPDIR/made"')
    temp = result.stdout.strip()
    assert result.exit_code == 0 and temp.startswith(tempfile.gettempdir()), result.stderr
    # Not before the result's next request could leave: a moment after the command's end.
    assert os.path.exists(temp)
    for _ in range(250):
        if not os.path.exists(temp):
            break
        await asyncio.sleep(0.02)
    assert not os.path.exists(temp)
    # In a worker thread: nothing on the loop waits for it (other chats' folders aside).
    assert [entry for entry in removed if entry[0] == temp] == [(temp, False)]


async def test_the_command_is_handed_over_last(
    places: tuple[Path, Path], prepared: CommandSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _outside = places
    steps: list[str] = []
    watch, hand_over = process.Child._watch_exit, Standby.hand_over

    def watching(child: process.Child) -> None:
        steps.append("exit watched")
        watch(child)

    def handing(standby: Standby, command: bytes) -> None:
        steps.append("handed over")
        hand_over(standby, command)

    monkeypatch.setattr(process.Child, "_watch_exit", watching)
    monkeypatch.setattr(Standby, "hand_over", handing)
    result = await _sh(prepared, project, "echo ran")
    assert result.stdout == "ran\n" and steps == ["exit watched", "handed over"]


async def test_a_launcher_gone_before_its_command_says_so(
    places: tuple[Path, Path], prepared: CommandSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _outside = places
    waiting = _spare(prepared)

    def gone(standby: Standby, command: bytes) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(Standby, "hand_over", gone)
    result = await _sh(prepared, project, "echo ran")
    assert not result.started and "ended before the command reached it" in result.stderr
    wait_for(lambda: not _alive(waiting), timeout=5)  # killed, never left waiting


def test_a_dropped_launcher_slow_to_end_is_still_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    program = native_launcher()
    assert program is not None
    standby = Standby(program, -1, 2 if os.geteuid() else 1, stdin_pipe=True)
    wait = standby.popen.wait
    timeouts: list[float | None] = []

    def slow(timeout: float | None = None) -> int:
        timeouts.append(timeout)
        if timeout is not None:  # as when the kernel takes long over its namespace's teardown
            raise subprocess.TimeoutExpired(standby.popen.args, timeout)
        return wait()

    monkeypatch.setattr(standby.popen, "wait", slow)
    standby.drop()  # returns at once: the host's loop is not held
    wait_for(lambda: standby.popen.returncode is not None, timeout=5)  # reaped, no zombie left
    assert timeouts[0] is not None and None in timeouts


def test_a_launcher_runs_nothing_before_it_is_confined(tmp_path: Path) -> None:
    program = native_launcher()
    assert program is not None
    standby = Standby(program, -1, 2 if os.geteuid() else 1, stdin_pipe=True)
    order = Order(("sh", "-c", f"echo x > {tmp_path}/ran"), str(tmp_path), {}, True)
    standby.control.sendall(order.message())  # "run" without "confine" first
    assert standby.popen.wait(5) == 126 and not (tmp_path / "ran").exists()
    assert standby.popen.stderr is not None
    assert b"unexpected message" in standby.popen.stderr.read()
    standby.release()


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
    waiting = await _next_spare(sandbox)
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
        following = await _next_spare(second)
        assert next_ready is not None and next_ready not in (made_ready, following)
    finally:
        first.close()
        second.close()
        workspace.close()  # the host exits: the launcher made ready for a third chat ends too
    wait_for(lambda: not Path(f"/proc/{next_ready}").exists(), timeout=5)


async def test_a_chats_sandbox_from_the_workspace_probes_off_the_loop(tmp_path: Path) -> None:
    # The chat opening awaits `probe`: the host's probe must run there, off the event loop,
    # not later inside the first question asked of the sandbox (`kind`, `prepare`).
    workspace = Workspace(HostOptions(data_dir=str(tmp_path / "data")))
    sandbox = workspace.command_sandbox()
    try:
        assert not sandbox.probed
        await sandbox.probe()
        assert sandbox.probed and sandbox.kind == "landlock"
        other = workspace.command_sandbox()
        assert other.probed  # one probe for every chat of the host
        other.close()
    finally:
        sandbox.close()
        workspace.close()


async def test_a_confined_runs_end_kills_its_cgroup_without_reading_environments(
    places: tuple[Path, Path], sandbox: CommandSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _outside = places
    swept: list[str] = []
    monkeypatch.setattr(process, "kill_marked", lambda value, **_: swept.append(value))
    line = (
        "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!; "
        "env -i setsid sleep 31 </dev/null >/dev/null 2>&1 & echo $!"
    )
    result = await _sh(sandbox, project, line)
    assert result.exit_code == 0 and swept == [], result.stderr
    left = [int(pid) for pid in result.stdout.split()]  # one marked, one that dropped it
    assert len(left) == 2
    wait_for(lambda: not any(_alive(pid) for pid in left), timeout=5)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


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
from codecompanion.sandbox import rulebook
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


_OPEN_ONLY = """
import json, sys
from pathlib import Path
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.settings import read_permissions
made = CommandSandbox(read_permissions({}), Detector(), project=Path(sys.argv[1]))
made.prepare()
waiting = made._standbys._held.waiting
print(json.dumps([waiting is not None and waiting.temp is not None, sorted(sys.modules)]))
made.close()
"""


def test_a_chat_whose_launcher_waits_confined_loads_no_tempfile_or_shutil(
    places: tuple[Path, Path],
) -> None:
    # Its private temp folder is made without them: with the compression modules shutil loads,
    # they are 0.8 MiB of a host whose chats may never run a command.
    package = Path(__file__).resolve().parents[2] / "rplugin" / "python3"
    out = subprocess.run(
        [sys.executable, "-c", _OPEN_ONLY, str(places[0])],
        env={**os.environ, "PYTHONPATH": str(package)},
        capture_output=True,
        text=True,
        check=True,
    )
    confined, loaded = json.loads(out.stdout.splitlines()[-1])
    assert confined  # the waiting launcher got its rules and its temp folder
    assert {"tempfile", "shutil", "bz2", "lzma"} & set(loaded) == set()
