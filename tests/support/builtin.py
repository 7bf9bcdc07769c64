"""The chat side of a builtin's call, hand-written for tests (the project root, the editor, the
user's answers), the ToolContext made from it, and a runner for one builtin call."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from codecompanion.messages import ToolCall
from codecompanion.ports import HunkDecision, UnsavedChoice
from codecompanion.sandbox.settings import Mode
from codecompanion.tools.model.contract import Invocation, ToolContext
from codecompanion.tools.model.function_tool import NativeCall, timeout_seconds
from codecompanion.tools.runtime.approval_policy import ApprovalMemory
from codecompanion.tools.runtime.approvals import ApprovalGate
from codecompanion.tools.runtime.child_env import EnvPolicy
from codecompanion.tools.runtime.command_runner import CommandRunner
from tests.support.fakes import FakeEditor


@dataclass
class FakeChat:
    """The chat as a call's code reaches it: its id, the messages tools add, the flags."""

    id: str = "chat-1"
    flags: dict[str, bool] = field(default_factory=dict)
    messages: list[tuple[str, str, bool]] = field(default_factory=list)

    def add_message(self, role: str, content: str, visible: bool = True) -> None:
        self.messages.append((role, content, visible))


@dataclass
class FakeTools:
    """What a builtin's ToolContext is made from: the project root (`cwd`), the editor, the
    answers to yes/no questions (each question and its kind kept), and what the real approval
    gate reads for a diff review (yolo, mode, remembered approvals)."""

    cwd: Path
    editor: FakeEditor | None = None
    yolo: bool = False
    opts: dict[str, Any] = field(default_factory=dict)
    chat_id: str = "chat-1"
    answers: list[bool] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # the gate's kind of each question
    tls: ssl.SSLContext | None = None  # the host's context; a default one when None
    approvals: ApprovalMemory = field(default_factory=ApprovalMemory)
    mode: Mode = "ask"  # the chat's permission mode (the yolo rule reads `yolo` itself)
    sandbox: None = None  # file tools run in the host, unconfined
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)  # what file tools told they wrote
    edited: list[Path] = field(default_factory=list)  # what they changed on disk
    chat: FakeChat = field(default_factory=FakeChat)

    @property
    def root(self) -> Path:
        """The project root (paths.py's PathScope)."""
        return self.cwd

    async def confirm(self, question: str, kind: str = "tool") -> bool:
        self.questions.append(question)
        self.kinds.append(kind)
        return self.answers.pop(0) if self.answers else False

    def fire(self, name: str, data: dict[str, Any]) -> None:
        self.events.append((name, data))

    def wrote(self, path: Path) -> None:
        self.written.append(path)

    def environment(self) -> dict[str, str]:
        return EnvPolicy.from_opts(self.opts.get("env")).environment()

    async def tls_context(self) -> ssl.SSLContext:
        return self.tls or ssl.create_default_context()

    def context(
        self, call: ToolCall, opts: dict[str, Any] | None = None, *, limit: bool = True
    ) -> ToolContext:
        """The ToolContext of `call` (the tool's `opts`), asking through these fakes; without
        `limit` the call has no time limit of the tool system's (only the tool's own)."""
        self.opts.setdefault("max_process_bytes", 1_000_000)
        return ToolContext(
            root=self.cwd,
            call=call,
            opts=dict(opts or {}),
            timeout=timeout_seconds(opts or {}, 300.0) if limit else None,
            mode="yolo" if self.yolo else self.mode,
            editor=self.editor,
            sandbox=self.sandbox,
            environment=self.environment,
            asks=FakeQuestions(self),
            commands=CommandRunner(self),  # type: ignore[arg-type]
            events=self,
            chat=self.chat,
            tls=self.tls_context,
            cancel=lambda: None,
            edited=self.edited,
            chat_opts=self.opts,
        )


class FakeQuestions:
    """A call's questions: yes/no ones answered from `FakeTools.answers`, a diff review by the
    real approval gate (its policy decides whether the fake editor is asked)."""

    def __init__(self, tools: FakeTools) -> None:
        self.tools = tools
        self.invocation: Invocation | None = None

    async def confirm(self, question: str, kind: str = "tool") -> bool:
        return await self.tools.confirm(question, kind)

    async def review(
        self, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision | None:
        gate = ApprovalGate(self.tools)  # type: ignore[arg-type]
        return await gate.review(self.invocation, path, old, new, note)

    async def unsaved(self, path: str) -> UnsavedChoice:
        """The real gate's question about an edit of a buffer with unsaved changes."""
        gate = ApprovalGate(self.tools)  # type: ignore[arg-type]
        return await gate.unsaved(self.invocation, path)


@dataclass(frozen=True)
class Outcome:
    """One call's status and the texts it answered."""

    status: str
    for_llm: str
    for_user: str | None
    data: Any = None


def start(
    module: ModuleType,
    args: dict[str, Any],
    tools: FakeTools,
    *,
    approved: bool = False,
    opts: dict[str, Any] | None = None,
) -> NativeCall:
    """One call of the module's TOOL, started as the orchestrator starts it."""
    call = ToolCall("call-1", module.TOOL.name, args)
    ctx = tools.context(call, {**module.TOOL.opts, **(opts or {})}, limit=False)
    code = module.TOOL.start(ctx, args, {})
    code.approved = approved
    ctx.asks.invocation = code  # type: ignore[attr-defined]
    return code


async def run_tool(
    module: ModuleType,
    args: dict[str, Any],
    tools: FakeTools,
    *,
    approved: bool = False,
    opts: dict[str, Any] | None = None,
) -> Outcome:
    """Run the module's TOOL once, as the orchestrator runs an approved call's code (without
    the tool system's time limit: what the tool does within its own is tested here)."""
    code = start(module, args, tools, approved=approved, opts=opts)
    reply = await code.run()
    data = code.output.data if code.output is not None else None
    return Outcome(reply.status, reply.for_llm, reply.for_user, data)


def prompt(module: ModuleType, args: dict[str, Any], tools: FakeTools) -> str:
    """The module's approval question for `args`."""
    code = start(module, args, tools)
    ask = module.TOOL.prompt
    assert ask is not None
    return str(ask(code.ctx, args))
