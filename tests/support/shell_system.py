"""A YOLO tool system offering only the builtin run_command, for suites that run real shells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, RecordingEvents, ScriptedApprover


def run_command_system(
    cwd: Path,
    run_command: dict[str, Any],
    approver: ScriptedApprover | None = None,
    opts: dict[str, Any] | None = None,
) -> tuple[ToolSystem, RecordingChat]:
    """The system (YOLO on, no auto-submit) and its chat; `run_command` is the tool's options."""
    chat = RecordingChat()
    tools = ToolSystem(
        chat=chat,
        registry=tool_registry({}, {}, tool_opts={"run_command": run_command}),
        approver=approver or ScriptedApprover(),
        events=RecordingEvents(),
        cwd=cwd,
        opts={"auto_submit": False, **(opts or {})},
        yolo=True,
    )
    tools.add_tool("run_command")
    return tools, chat
