"""Run tools the way a user writes them: a Python config file, loaded as the plugin loads it."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codecompanion.config import load_config
from codecompanion.messages import ToolCall
from codecompanion.tools import tool_registry
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.system import BatchSummary, ToolSystem
from tests.support.builder import built_tool_system
from tests.support.fakes import (
    Answer,
    RecordedResult,
    RecordingChat,
    RecordingEvents,
    ScriptedApprover,
)
from tests.support.tools import CALCULATOR_SCHEMA

# The calculator's schema as source text, for config files to share.
SCHEMA_TEXT = f"\nSCHEMA = {CALCULATOR_SCHEMA!r}\n"

# The schema and the guide's function: what the guide's config file starts with.
CALCULATOR = (
    SCHEMA_TEXT
    + """
def calculate(num1, num2, operation):
    return {"add": num1 + num2, "subtract": num1 - num2, "multiply": num1 * num2}.get(
        operation, num1 / num2 if num2 else None
    )
"""
)


@dataclass
class Ran:
    """A batch run from a config file: its outcome and the fakes that saw it."""

    system: ToolSystem
    chat: RecordingChat
    approver: ScriptedApprover
    events: RecordingEvents
    outcome: BatchSummary

    def result(self, call_id: str = "c1") -> RecordedResult:
        """The one result of `call_id`."""
        return self.chat.result(call_id)


def load(tmp_path: Path, text: str) -> ToolRegistry:
    """Write `text` as the user's config file and load its tools; no error is allowed."""
    path = tmp_path / "codecompanion.py"
    path.write_text(textwrap.dedent(text))
    config = load_config(path)
    assert config.error is None, config.error
    registry = tool_registry(config.tools, config.groups, tool_opts=config.opts.get("tools") or {})
    registry.names()
    assert registry.errors == [], registry.errors
    return registry


async def run(
    tmp_path: Path,
    text: str,
    *calls: ToolCall,
    answers: tuple[Answer, ...] = (),
    default: Answer = "approve",
    opts: dict[str, Any] | None = None,
) -> Ran:
    """Load the config in `text` and run `calls` (offered first) in one batch."""
    registry = load(tmp_path, text)
    chat, events = RecordingChat(), RecordingEvents()
    approver = ScriptedApprover(*answers, default=default)
    system = built_tool_system(
        chat=chat,
        registry=registry,
        approver=approver,
        events=events,
        cwd=tmp_path,
        opts={"auto_submit": False, **(opts or {})},
    )
    for call in calls:
        assert system.add_tool(call.name), call.name
    outcome = await system.run(list(calls))
    return Ran(system, chat, approver, events, outcome)


def call(name: str, args: dict[str, Any] | None = None, call_id: str = "c1") -> ToolCall:
    """A call of `name` with `args`."""
    return ToolCall(call_id, name, dict(args or {}))
