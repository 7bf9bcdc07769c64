# ruff: noqa: E501 - one line per step reads best here

"""The chat's process cap (`max_processes`) holds for code_runner however it runs: in the
sandbox (the chat's cgroup, see test_edges_in_neovim.py), in a container (`--pids-limit`), and
unconfined (RLIMIT_NPROC, counted over the user's own processes: a non-root user's fork bomb
stops at the cap; root is held by the cgroup instead)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.settings import read_permissions
from codecompanion.tools import tool_registry
from codecompanion.tools.builtin._support import sandbox
from codecompanion.tools.runtime.process import run_process
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.tools import builtin_system

FORK = """
import subprocess
children = []
try:
    for _ in range(300):
        children.append(subprocess.Popen(["sleep", "20"]))
except OSError as exc:
    print("refused after", len(children))
print("started", len(children))
for child in children:
    child.kill()
"""


def unconfined(project: Path, limit: int, container: object = False) -> ToolSystem:
    """A chat whose sandbox is switched off (code_runner runs as a plain process)."""
    permissions = read_permissions({"sandbox": False, "max_processes": limit})
    opts = {"code_runner": {"container": container, "requires_approval": False}}
    tools, _chat = builtin_system(
        project,
        "code_runner",
        registry=tool_registry({}, tool_opts=opts),
        approver=ScriptedApprover(default="approve"),
        sandbox=CommandSandbox(permissions, Detector()),
        mode="yolo",
    )
    return tools


async def run_code(tools: ToolSystem, code: str) -> str:
    await tools.run([ToolCall("c", "code_runner", {"lang": "python", "code": code})])
    return str(tools.chat.result("c").for_llm)  # type: ignore[attr-defined]


async def test_an_unconfined_run_gets_the_chats_cap_as_a_process_limit(tmp_path: Path) -> None:
    tools = unconfined(tmp_path, 40)
    text = await run_code(
        tools, "import resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC))"
    )
    assert "unconfined" in text
    soft = int(re.findall(r"\((\d+), \d+\)", text)[0])
    mine = sum(
        1
        for p in os.listdir("/proc")
        if p.isdigit() and os.stat(f"/proc/{p}").st_uid == os.getuid()
    )
    assert 40 <= soft <= mine + 40 + 50, text  # the user's processes now, and 40 more


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv to run as another user")
async def test_a_non_root_fork_bomb_stops_at_the_cap() -> None:
    folder = Path(tempfile.mkdtemp(prefix="cc-nproc-"))  # one the other user can reach
    folder.chmod(0o777)
    (folder / "main.py").write_text(FORK)
    language = sandbox.find_language(sandbox.LANGUAGES, "python")
    assert language is not None
    plan = sandbox.process_plan(
        language, folder / "main.py", sandbox.Limits(processes=40), (), {"PATH": os.environ["PATH"]}
    )
    nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    argv = [*nobody, *plan.commands[0]]
    argv[argv.index(sys.executable)] = "/usr/bin/python3"  # one the other user may run
    try:
        result = await run_process(argv, cwd=folder, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert "refused after" in result.stdout and "started 300" not in result.stdout, result


async def test_a_container_gets_the_chats_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = bin_dir / "docker.log"
    docker = bin_dir / "docker"
    docker.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\ncase "$1" in info) exit 0;; esac\nexit 0\n'
    )
    docker.chmod(docker.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    tools = unconfined(tmp_path, 77, container="docker")
    await run_code(tools, "print(1)")
    run = next(line.split() for line in log.read_text().splitlines() if line.startswith("run "))
    assert run[run.index("--pids-limit") + 1] == "77"
