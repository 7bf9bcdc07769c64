"""Every command the chat starts shares its process cap (`max_processes`), confined or not:
one the user let out of the sandbox and one of a chat whose sandbox is off join the chat's
cgroup where there is one, else get RLIMIT_NPROC (the user's tasks now + the cap). Real
processes: fork bombs of 300 children, a daemon that leaves its session and environment,
two commands of one chat at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector, detect
from codecompanion.sandbox.process_cap import PidCgroup
from codecompanion.sandbox.settings import read_permissions
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.nvim import wait_for
from tests.support.other_users import copy_package, shared_folder
from tests.support.proctable import kill_groups, with_marker
from tests.support.tools import builtin_system

PACKAGE = Path(__file__).resolve().parents[2] / "rplugin" / "python3"
CAP = 40

# Starts up to 300 children, says how far it got and why it stopped, then ends them.
FORK = """
import subprocess, sys
children = []
try:
    for _ in range(300):
        children.append(subprocess.Popen(["sleep", "20"]))
except OSError as exc:
    print("refused after", len(children), exc)
print("started", len(children))
for child in children:
    child.kill()
"""

# Forks for ever (marked by its argument), whatever is refused: only its time ends it.
ENDLESS = """
import subprocess, sys, time
told = False
while True:
    try:
        subprocess.Popen(["sh", "-c", "sleep 300", sys.argv[1]])
    except OSError as exc:
        if not told:
            print(exc, flush=True)
            told = True
        time.sleep(0.01)
"""

# The chat's command runner in a process of its own (run as another user, who runs 60 other
# processes meanwhile): the fork bomb confined (when the sandbox is on) and let out of it, then
# an ordinary command; the sandbox's kind and each run as JSON.
DRIVER = """
import asyncio, json, subprocess, sys
from pathlib import Path
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.settings import read_permissions
from codecompanion.tools.runtime.command_runner import CommandRunner

folder, cap, sandbox = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "on"

class Settings:
    def __init__(self):
        permissions = read_permissions({"sandbox": sandbox, "max_processes": cap})
        self.cwd, self.opts = folder, {}
        self.sandbox = CommandSandbox(permissions, Detector(), project=folder)
    def environment(self):
        return {"PATH": "/usr/bin:/bin"}
    async def confirm(self, question, kind="tool"):
        return True

async def main():
    settings = Settings()
    runner = CommandRunner(settings)
    runs = []
    for confined in (True, False) if sandbox else (False,):
        runs.append(await runner.run(["python3", "fork.py"], timeout=60, confined=confined))
    runs.append(await runner.run(["sh", "-c", "echo ok"], timeout=30))
    settings.sandbox.close()
    print(json.dumps([settings.sandbox.kind, [[r.status, r.stdout, r.notes] for r in runs]]))

others = [subprocess.Popen(["sleep", "60"]) for _ in range(60)]
try:
    asyncio.run(main())
finally:
    for other in others:
        other.kill()
"""

FOUND = detect()
needs_landlock = pytest.mark.skipif(
    FOUND.kind != "landlock", reason=f"no sandbox here: {FOUND.reason}"
)


def _cgroup_capped() -> bool:
    group = PidCgroup.make(CAP)
    if group is None:
        return False
    group.close()
    return group.capped


needs_cgroup = pytest.mark.skipif(not _cgroup_capped(), reason="no pids cgroup can be made here")
another_user = pytest.mark.skipif(
    shutil.which("setpriv") is None or not os.path.exists("/usr/bin/python3") or os.getuid() != 0,
    reason="needs root, setpriv and /usr/bin/python3 to run the chat as another user",
)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder another user may read and write (pytest's own are private to us)."""
    with shared_folder("cc-cap-") as folder:
        yield folder


def chat(
    project: Path, permissions: dict[str, object], mode: str = "sandboxed", seconds: int = 60
) -> ToolSystem:
    """A chat that runs run_command (for at most `seconds`); the user approves what is asked."""
    sandbox = CommandSandbox(read_permissions(permissions), Detector(), project=project)
    tools, _chat = builtin_system(
        project,
        "run_command",
        tool_opts={"run_command": {"timeout": seconds * 1000}},
        approver=ScriptedApprover(default="approve"),
        sandbox=sandbox,
        mode=mode,
    )
    return tools


async def command(tools: ToolSystem, cmd: str, unconfined: bool = True) -> tuple[str, str]:
    """One run_command call: (status, the model's text)."""
    call_id = f"c{uuid.uuid4().hex[:6]}"
    args: dict[str, object] = {"cmd": cmd, "unconfined": unconfined}
    outcome = await tools.run([ToolCall(call_id, "run_command", args)])
    return outcome.statuses[call_id], str(tools.chat.result(call_id).for_llm)  # type: ignore[attr-defined]


def left_in(tools: ToolSystem) -> list[int]:
    """The processes in the chat's cgroup now, besides the sandbox's waiting launcher."""
    box = tools.sandbox
    assert box is not None
    cap = box.process_cap()
    assert cap.cgroup is not None
    listed = (Path(cap.cgroup.folder) / "cgroup.procs").read_text().split()
    return [int(pid) for pid in listed if int(pid) != cap.spare()]


def unused_uid() -> int:
    """A user id no process runs as now (no account needed to run as it)."""
    running = set()
    for pid in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError):
            running.add(os.stat(f"/proc/{int(pid)}").st_uid)
    start = random.randrange(200_000, 300_000)
    return next(uid for uid in range(start, start + 1000) if uid not in running)


def python_for(folder: Path, launcher: str) -> str:
    """A Python another user may run, with the native sandbox launcher beside it or not (the
    host looks for it next to its interpreter)."""
    if launcher == "in Python":
        return "/usr/bin/python3"
    native = Path(sys.executable).parent / "codecompanion-confine"
    if not os.access(native, os.X_OK):
        pytest.skip("the native launcher is not built (make install)")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to("/usr/bin/python3")
    shutil.copy(native, bin_dir / "codecompanion-confine")
    return str(bin_dir / "python3")


@another_user
@pytest.mark.parametrize(
    ("sandbox", "launcher"), [("off", "in Python"), ("on", "in Python"), ("on", "native")]
)
def test_a_users_fork_bomb_stops_at_the_cap(shared: Path, sandbox: str, launcher: str) -> None:
    (shared / "fork.py").write_text(FORK)
    (shared / "driver.py").write_text(DRIVER)
    python = python_for(shared, launcher)
    user = unused_uid()  # whose processes no other test starts or ends meanwhile
    as_user = ("setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups")
    package = copy_package(PACKAGE, shared)  # the checkout may be private to us
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(package), "HOME": str(shared)}
    done = subprocess.run(
        [*as_user, python, "driver.py", str(shared), str(CAP), sandbox],
        cwd=shared,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    kind, runs = json.loads(done.stdout)
    if sandbox == "on" and kind != "landlock":
        pytest.skip(f"no sandbox for another user here ({kind})")
    *bombs, after = runs
    for _status, out, notes in bombs:
        assert "refused after" in out and "started 300" not in out, out
        started = int(out.split("started ")[1].split()[0])
        assert started < CAP, out  # the user's 60 other processes took none of it
        assert notes == (
            f"note: the command reached the chat's process cap (max_processes = {CAP}): "
            "starting more processes was refused."
        )
    assert after == ["success", "ok\n", ""], after


@needs_landlock
@needs_cgroup
async def test_a_fork_bomb_let_out_of_the_sandbox_stops_at_the_cap(tmp_path: Path) -> None:
    tools = chat(tmp_path, {"max_processes": CAP})
    (tmp_path / "fork.py").write_text(FORK)
    status, text = await command(tools, f"{sys.executable} fork.py")
    assert "sandbox: unconfined (the user approved leaving the sandbox)" in text, text
    assert "refused after" in text and "started 300" not in text, text
    assert f"process cap (max_processes = {CAP})" in text, text
    assert status == "success"
    assert left_in(tools) == []
    # The chat's other commands, confined or not, run as before.
    assert await command(tools, "echo ok", unconfined=False) == ("success", _text_with("ok"))
    status, text = await command(tools, "echo fine")
    assert status == "success" and "fine" in text and "process cap" not in text, text


class _text_with(str):
    """Equal to any text containing it (a result's whole text is long)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and str(self) in other

    __hash__ = str.__hash__


@needs_cgroup
async def test_a_fork_bomb_past_its_time_is_killed_whole(tmp_path: Path) -> None:
    tools = chat(tmp_path, {"sandbox": False, "max_processes": CAP}, mode="yolo", seconds=2)
    mark = f"ccbomb{uuid.uuid4().hex[:8]}"
    (tmp_path / "endless.py").write_text(ENDLESS)
    try:
        status, text = await command(tools, f"{sys.executable} endless.py {mark}", False)
        assert status == "timeout", text
        assert f"process cap (max_processes = {CAP})" in text, text
        assert wait_for(lambda: not with_marker(mark), timeout=5)
        assert left_in(tools) == []
        assert (await command(tools, "echo after", False))[0] == "success"
    finally:
        kill_groups({p.pgid for p in with_marker(mark)})


@needs_cgroup
async def test_an_unconfined_daemon_does_not_outlive_its_command(tmp_path: Path) -> None:
    tools = chat(tmp_path, {"sandbox": False}, mode="yolo")
    mark = f"ccdaemon{uuid.uuid4().hex[:8]}"
    try:
        cmd = f"env -i setsid sh -c 'sleep 300; echo {mark}' >/dev/null 2>&1 < /dev/null &"
        status, text = await command(tools, cmd, False)
        assert status == "success", text
        assert wait_for(lambda: not with_marker(mark), timeout=5)
    finally:
        kill_groups({p.pgid for p in with_marker(mark)})


@needs_cgroup
async def test_one_commands_end_leaves_another_running_beside_it(tmp_path: Path) -> None:
    tools = chat(tmp_path, {"sandbox": False}, mode="yolo")
    runner = tools.commands
    slow = runner.run(["sh", "-c", "sleep 1; echo slow done"], timeout=30, confined=False)

    async def quick() -> str:
        await asyncio.sleep(0.3)  # ends while the slow one sleeps
        return (await runner.run(["true"], timeout=30, confined=False)).status

    first, second = await asyncio.gather(slow, quick())
    assert second == "success"
    assert first.status == "success" and first.stdout == "slow done\n", first


@needs_cgroup
@pytest.mark.parametrize("confined", [False, True])
async def test_a_command_that_cannot_start_leaves_the_chats_cgroup_to_the_others(
    tmp_path: Path, confined: bool
) -> None:
    if confined and FOUND.kind != "landlock":
        pytest.skip(f"no sandbox here: {FOUND.reason}")
    tools = chat(tmp_path, {})
    run = await tools.commands.run(["echo", "a\0b"], timeout=30, confined=confined)
    assert run.status == "error" and not run.started, run
    assert run.stderr.startswith("cannot start 'echo': ") and "NUL" in run.stderr.upper(), run
    box = tools.sandbox
    assert box is not None
    cgroup = box.process_cap().cgroup
    assert cgroup is not None and cgroup.runs == 0  # so the next command's end sweeps it


@needs_cgroup
async def test_a_stopped_unconfined_command_takes_its_escaped_daemon_with_it(
    tmp_path: Path,
) -> None:
    tools = chat(tmp_path, {"sandbox": False}, mode="yolo")
    mark = f"ccstop{uuid.uuid4().hex[:8]}"
    # A daemon out of the command's session and without its environment, then a long wait.
    cmd = f"env -i setsid sh -c 'sleep 300; echo {mark}' >/dev/null 2>&1 < /dev/null & sleep 300"
    try:
        batch = asyncio.ensure_future(
            tools.run([ToolCall("s", "run_command", {"cmd": cmd, "unconfined": False})])
        )
        await asyncio.to_thread(wait_for, lambda: with_marker(mark))
        tools.cancel()
        assert (await batch).statuses == {"s": "cancelled"}
        assert await asyncio.to_thread(wait_for, lambda: not with_marker(mark), 5)
        assert left_in(tools) == []
    finally:
        kill_groups({p.pgid for p in with_marker(mark)})
