"""A YOLO tool system offering only the builtin run_command, for suites that run real shells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.tools import builtin_system


def run_command_system(
    cwd: Path,
    run_command: dict[str, Any],
    approver: ScriptedApprover | None = None,
    opts: dict[str, Any] | None = None,
    adapters: dict[str, dict[str, Any]] | None = None,
) -> tuple[ToolSystem, RecordingChat]:
    """The system (YOLO on, no auto-submit) and its chat; `run_command` is the tool's options,
    `adapters` the configured ones."""
    tool_opts = {"run_command": run_command}
    return builtin_system(
        cwd,
        "run_command",
        approver=approver,
        tool_opts=tool_opts,
        opts=opts,
        yolo=True,
        adapters=adapters or {},
    )
