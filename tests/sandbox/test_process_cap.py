# ruff: noqa: E501 - one line per step reads best here

"""The chat's process cap (`max_processes`) holds for code_runner however it runs: in the
sandbox (the chat's cgroup, see test_edges_in_neovim.py), in a container (`--pids-limit`), and
unconfined (the chat's cgroup, else RLIMIT_NPROC: see test_command_cap.py, where a non-root
user's fork bomb stops at the cap)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector
from codecompanion.sandbox.process_cap import user_tasks
from codecompanion.sandbox.settings import read_permissions
from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.tools import builtin_system


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


async def test_an_unconfined_code_run_is_held_by_the_chats_cap(tmp_path: Path) -> None:
    tools = unconfined(tmp_path, 40)
    code = (
        "import resource\n"
        "print(resource.getrlimit(resource.RLIMIT_NPROC))\n"
        "print(open('/proc/self/cgroup').read())\n"
    )
    text = await run_code(tools, code)
    assert "unconfined" in text
    box = tools.sandbox
    assert box is not None
    cap = box.process_cap()
    if cap.cgroup is not None and cap.cgroup.capped:  # root here: the chat's cgroup holds it
        assert Path(cap.cgroup.folder).name in text, text
        assert (Path(cap.cgroup.folder) / "pids.max").read_text().strip() == "40"
    else:  # the user's process count: those running now, and 40 more
        soft = int(re.findall(r"\((\d+), \d+\)", text)[0])
        assert 40 <= soft <= user_tasks(os.getuid()) + 40 + 50, text


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
