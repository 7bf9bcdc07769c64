"""The working state of one call while its batch runs, and how it becomes the call's result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ...messages import ToolCall
from ..model.registry import ToolEntry
from ..model.tool import Tool
from .results import CallResult, OutputBuffer, Status, default_output
from .runner import Execution


@dataclass
class CallRun:
    """The working state of one call while the batch runs."""

    call: ToolCall
    index: int
    buffer: OutputBuffer
    entry: ToolEntry | None = None
    tool: Tool | None = None  # the call's own copy of the tool (`Tool.bind`), args filled in
    started: bool = False  # got as far as setup: on_exit is owed
    notes: list[str] = field(default_factory=list)
    execution: Execution = field(default_factory=Execution)
    reason: str | None = None
    detail: str = ""
    output_failed: bool = False

    def fail(self, message: str, detail: str, limit: int) -> CallResult:
        """An error result saying `message` (`detail` is shown beside the tool line)."""
        self.buffer.add(message)
        self.detail = detail or self.detail
        return self.finish("error", limit)

    def finish(self, status: Status, limit: int) -> CallResult:
        """The call's result: what the tool added, or the default text; capped at `limit`."""
        execution = self.execution
        errors = execution.stderr or ([self.detail] if self.detail else [])
        default = default_output(status, self.call.name, execution.stdout, errors, self.reason)
        result = self.buffer.result(status, default, [n for n in self.notes if n], limit)
        return CallResult(
            result.status, result.for_llm, result.for_user, result.full_output, self.detail
        )


Step = Callable[[CallRun], Awaitable[CallResult | None]]


def handlers_once(tool: Tool | None) -> bool:
    """True if consecutive calls of this tool share one setup/on_exit."""
    return tool is not None and bool(tool.opts.get("use_handlers_once"))
