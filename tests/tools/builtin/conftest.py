"""Hand-written stand-ins for the tool system and the editor, and a runner for one builtin call."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codecompanion.messages import ToolCall
from codecompanion.ports import Diagnostic, HunkDecision
from codecompanion.tools.runtime.approval_memory import ApprovalMemory
from codecompanion.tools.runtime.approvals import ApprovalGate


@dataclass
class RecordingChat:
    """Records every add_tool_output call as (tool name, for_llm, for_user)."""

    outputs: list[tuple[str, str, str | None]] = field(default_factory=list)

    def add_tool_output(self, tool: Any, for_llm: Any, for_user: Any = None) -> None:
        self.outputs.append((tool.name, str(for_llm), None if for_user is None else str(for_user)))


@dataclass
class FakeEditor:
    """Loaded buffers by absolute path, scripted diagnostics and diff-review answers."""

    buffers: dict[str, list[str]] = field(default_factory=dict)
    diagnostic_map: dict[str, list[Diagnostic]] = field(default_factory=dict)
    decisions: list[HunkDecision | str] = field(default_factory=list)
    reviews: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    writes: list[tuple[str, list[str]]] = field(default_factory=list)
    diagnostic_calls: list[tuple[str, str]] = field(default_factory=list)
    on_review: Callable[[], object] | None = None
    notes: list[str | None] = field(default_factory=list)

    async def buffer_lines(self, path: str) -> list[str] | None:
        lines = self.buffers.get(path)
        return None if lines is None else list(lines)

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        if path not in self.buffers:
            return False
        self.buffers[path] = list(lines)
        self.writes.append((path, list(lines)))
        return True

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None
    ) -> list[Diagnostic]:
        self.diagnostic_calls.append((path, min_severity))
        return list(self.diagnostic_map.get(path, []))

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision:
        from codecompanion.tools.diffs import hunks

        self.reviews.append((path, list(old), list(new)))
        self.notes.append(note)
        if self.on_review is not None:
            self.on_review()
        answer = self.decisions.pop(0) if self.decisions else "accept"
        count = len(hunks(old, new))
        if answer == "accept":
            return HunkDecision(accepted=tuple(range(count)))
        if answer == "reject":
            return HunkDecision(accepted=(), rejected=tuple(range(count)), reason="not wanted")
        assert isinstance(answer, HunkDecision)
        return answer


@dataclass
class FakeTools:
    """The attributes and methods the run-time contract gives `self.tools`."""

    cwd: Path
    editor: FakeEditor | None = None
    yolo: bool = False
    opts: dict[str, Any] = field(default_factory=dict)
    chat_id: str = "chat-1"
    chat: RecordingChat = field(default_factory=RecordingChat)
    answers: list[bool] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    tls: ssl.SSLContext | None = None  # the host's context; the system's store when None

    approvals: ApprovalMemory = field(default_factory=ApprovalMemory)
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


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project root (resolved)."""
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def tools(project: Path) -> FakeTools:
    """A tool system stand-in rooted at `project`, without an editor."""
    return FakeTools(cwd=project)
