"""A hand-written stand-in for the tool system as builtin tool code sees it, and a runner for one
builtin call."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from codecompanion.messages import ToolCall
from codecompanion.ports import HunkDecision, UnsavedChoice
from codecompanion.sandbox.settings import Mode
from codecompanion.tools.runtime.approval_policy import ApprovalMemory
from codecompanion.tools.runtime.approvals import ApprovalGate
from tests.support.fakes import FakeEditor


@dataclass
class OutputLog:
    """The chat as tool code sees it here: every add_tool_output call as (tool, for_llm,
    for_user)."""

    outputs: list[tuple[str, str, str | None]] = field(default_factory=list)

    def add_tool_output(self, tool: Any, for_llm: Any, for_user: Any = None) -> None:
        self.outputs.append((tool.name, str(for_llm), None if for_user is None else str(for_user)))


@dataclass
class FakeTools:
    """The attributes and methods the run-time contract gives `self.tools`."""

    cwd: Path
    editor: FakeEditor | None = None
    yolo: bool = False
    opts: dict[str, Any] = field(default_factory=dict)
    chat_id: str = "chat-1"
    chat: OutputLog = field(default_factory=OutputLog)
    answers: list[bool] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    tls: ssl.SSLContext | None = None  # the host's context; the system's store when None

    approvals: ApprovalMemory = field(default_factory=ApprovalMemory)
    mode: Mode = "ask"  # the chat's permission mode (the yolo rule reads `yolo` itself)
    sandbox: None = None  # file tools run in the host, unconfined
    kinds: list[str] = field(default_factory=list)  # the gate's kind of each question

    async def confirm(self, question: str, kind: str = "tool") -> bool:
        self.questions.append(question)
        self.kinds.append(kind)
        return self.answers.pop(0) if self.answers else False

    async def review_diff(
        self, tool: Any, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision | None:
        """The real gate's review (its policy decides whether the fake editor is asked)."""
        return await ApprovalGate(self).review(tool, path, old, new, note)  # type: ignore[arg-type]

    async def unsaved_edit(self, tool: Any, path: str) -> UnsavedChoice:
        """The real gate's question about an edit of a buffer with unsaved changes."""
        return await ApprovalGate(self).unsaved(tool, path)  # type: ignore[arg-type]

    async def tls_context(self) -> ssl.SSLContext:
        return self.tls or ssl.create_default_context()


@dataclass(frozen=True)
class Outcome:
    """One call's status and the texts it added."""

    status: str
    for_llm: str
    for_user: str | None
    data: Any = None


async def run_tool(
    module: ModuleType,
    args: dict[str, Any],
    tools: FakeTools,
    *,
    approved: bool = False,
    opts: dict[str, Any] | None = None,
) -> Outcome:
    """Bind the module's TOOL, run its cmds in order as the contract says, then its output."""
    tool = module.TOOL.bind(ToolCall("call-1", module.TOOL.name, args), args, {}, tools)
    tool.opts.update(opts or {})
    tool.state["approved"] = approved
    stdout: list[Any] = []
    previous: Any = None
    before = len(tools.chat.outputs)
    status = "success"
    for cmd in tool.cmds:
        result = await cmd(tool, tool.args, previous, lambda _result: None)
        if result["status"] == "error":
            status = "error"
            tool.output["error"](tool, tools, tool.args, [result["data"]], stdout)
            break
        stdout.append(result["data"])
        previous = result
    else:
        tool.output["success"](tool, tools, tool.args, stdout)
    added = tools.chat.outputs[before:]
    assert len(added) == 1, added
    _name, for_llm, for_user = added[0]
    return Outcome(status, for_llm, for_user, (stdout or [None])[-1])
