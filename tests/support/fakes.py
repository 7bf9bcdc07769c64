"""Hand-written fakes for the core's ports, shared by the test suites (no mocks).

- `ScriptedApprover`: answers approval requests from a script and records what it was asked.
- `RecordingEvents`: keeps every fired event.
- `RecordingChat`: the `ToolChat` side of a chat; keeps every result and status.
- `FakeEditor`: loaded buffers, diagnostics and diff-review answers from dicts and lists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from codecompanion.messages import ToolCall, ToolResult
from codecompanion.ports import (
    ApprovalDecision,
    ApprovalRequest,
    BufferEdited,
    Diagnostic,
    FreshDiagnostics,
    HunkDecision,
    Reloaded,
    UnsavedChoice,
)
from codecompanion.tools.diffs import hunks

# A scripted answer: a decision, a choice name ("approve", "reject", ...), WAIT (never answer,
# until cancelled), or a function of the request returning one of these.
Answer = ApprovalDecision | str | Callable[[ApprovalRequest], Any]
WAIT = "wait"


class ScriptedApprover:
    """Answers each `ask` with the next scripted answer (or the one scripted for its call id).

    `answers` are used in order; `by_call` maps a call id to its answer and wins over the order;
    when both are exhausted `default` is used. `confirms` answer `confirm` in order (then
    `confirm_default`). `asked` is set whenever a request arrives, so a test can act while an
    approval is pending.
    """

    def __init__(
        self,
        *answers: Answer,
        by_call: dict[str, Answer] | None = None,
        default: Answer = "approve",
        confirms: tuple[bool, ...] = (),
        confirm_default: bool = False,
    ) -> None:
        self.answers = list(answers)
        self.by_call = dict(by_call or {})
        self.default = default
        self.confirms = list(confirms)
        self.confirm_default = confirm_default
        self.requests: list[ApprovalRequest] = []
        self.questions: list[str] = []
        self.asked = asyncio.Event()

    @property
    def prompts(self) -> list[str]:
        """The question text of every request so far."""
        return [request.prompt for request in self.requests]

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """Record the request and answer it from the script."""
        self.requests.append(request)
        self.asked.set()
        if request.call_id in self.by_call:
            answer = self.by_call.pop(request.call_id)
        else:
            answer = self.answers.pop(0) if self.answers else self.default
        if callable(answer):
            answer = answer(request)
        if answer == WAIT:
            await asyncio.Event().wait()  # only a cancel ends this
        if isinstance(answer, ApprovalDecision):
            return answer
        return ApprovalDecision(answer)

    async def confirm(self, chat_id: str, question: str) -> bool:
        """Record the question and answer it from `confirms`."""
        self.questions.append(question)
        return self.confirms.pop(0) if self.confirms else self.confirm_default


@dataclass
class RecordingEvents:
    """Keeps every `fire(name, data)`."""

    fired: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Record the event."""
        self.fired.append((name, dict(data)))

    def names(self) -> list[str]:
        """The event names, in order."""
        return [name for name, _ in self.fired]

    def of(self, name: str) -> list[dict[str, Any]]:
        """The data of every event called `name`."""
        return [data for fired, data in self.fired if fired == name]


@dataclass(frozen=True)
class RecordedResult:
    """One `record_tool_result` call."""

    call: ToolCall
    for_llm: str
    for_user: str | None
    is_error: bool
    full_output: str | None


@dataclass
class RecordingChat:
    """A `ToolChat`: keeps every result and every status change."""

    id: str = "chat-1"
    results: list[RecordedResult] = field(default_factory=list)
    statuses: list[tuple[str, str, str]] = field(default_factory=list)
    messages: list[tuple[str, str, bool]] = field(default_factory=list)

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the result."""
        self.results.append(
            RecordedResult(
                call, result.for_llm, result.for_user, result.is_error, result.full_output
            )
        )

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Keep the status change as (call id, status, detail)."""
        self.statuses.append((call.id, status, detail))

    def add_tool_message(self, role: str, content: str, visible: bool) -> None:
        """Keep a message tool code added, as (role, content, visible)."""
        self.messages.append((role, content, visible))

    def result(self, call_id: str) -> RecordedResult:
        """The one result of `call_id` (fails if there is not exactly one)."""
        found = [r for r in self.results if r.call.id == call_id]
        assert len(found) == 1, f"{call_id}: {len(found)} results"
        return found[0]

    def final_status(self, call_id: str) -> str:
        """The last status reported for `call_id`."""
        return [status for cid, status, _ in self.statuses if cid == call_id][-1]


@dataclass
class FakeEditor:
    """Loaded buffers by absolute path, scripted diagnostics and diff-review answers.

    A review is answered by `review` when set (a HunkDecision, or a function of (path, old,
    new)), else by the next of `decisions` ("accept", "reject" or a HunkDecision), else
    accepted (hunks numbered as `diffs.hunks` does).
    """

    buffers: dict[str, list[str]] = field(default_factory=dict)
    diagnostic_map: dict[str, list[Diagnostic]] = field(default_factory=dict)
    decisions: list[HunkDecision | str] = field(default_factory=list)
    reviews: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    writes: list[tuple[str, list[str]]] = field(default_factory=list)
    diagnostic_calls: list[tuple[str, str]] = field(default_factory=list)
    on_review: Callable[[], object] | None = None
    notes: list[str | None] = field(default_factory=list)
    review: HunkDecision | Callable[[str, list[str], list[str]], HunkDecision] | None = None
    modified: set[str] = field(default_factory=set)  # buffers with the user's unsaved changes
    saved: list[str] = field(default_factory=list)
    unsaved_answers: list[UnsavedChoice] = field(default_factory=list)
    unsaved_asked: list[str] = field(default_factory=list)
    followed: list[tuple[str, int | None]] = field(default_factory=list)
    live: bool = True

    async def buffer_lines(self, path: str) -> list[str] | None:
        lines = self.buffers.get(path)
        return None if lines is None else list(lines)

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        if path not in self.buffers:
            return False
        self.buffers[path] = list(lines)
        self.writes.append((path, list(lines)))
        return True

    async def buffer_modified(self, path: str) -> bool | None:
        return (path in self.modified) if path in self.buffers else None

    async def write_buffer(
        self, chat_id: str, path: str, expected: list[str], lines: list[str], save: bool
    ) -> BufferEdited:
        if path not in self.buffers:
            return BufferEdited("closed")
        if self.buffers[path] != expected:
            return BufferEdited("changed")
        self.buffers[path] = list(lines)
        self.writes.append((path, list(lines)))
        if save:
            self.saved.append(path)
            self.modified.discard(path)
            return BufferEdited("saved", before=tuple(self.diagnostic_map.get(path, [])))
        self.modified.add(path)
        return BufferEdited("unsaved", before=tuple(self.diagnostic_map.get(path, [])))

    async def ask_unsaved(self, chat_id: str, path: str) -> UnsavedChoice:
        self.unsaved_asked.append(path)
        return self.unsaved_answers.pop(0) if self.unsaved_answers else "buffer"

    async def reload(self, paths: list[str]) -> Reloaded:
        return Reloaded()

    async def loaded_under(self, root: str) -> list[str]:
        return [p for p in self.buffers if p.startswith(root.rstrip("/") + "/")]

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        self.diagnostic_calls.append((path, min_severity))
        found = self.diagnostic_map.get(path)
        servers = ("fake-lsp",) if found is not None else ()
        return FreshDiagnostics(tuple(found or ()), servers, fresh=True)

    def may_check(self, path: str) -> bool:
        return path in self.buffers or path in self.diagnostic_map

    def follow(self, path: str, line: int | None = None) -> None:
        self.followed.append((path, line))

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision:
        self.reviews.append((path, list(old), list(new)))
        self.notes.append(note)
        if self.on_review is not None:
            self.on_review()
        if isinstance(self.review, HunkDecision):
            return self.review
        if self.review is not None:
            return self.review(path, old, new)
        answer = self.decisions.pop(0) if self.decisions else "accept"
        count = len(hunks(old, new))
        if answer == "accept":
            return HunkDecision(accepted=tuple(range(count)))
        if answer == "reject":
            return HunkDecision(accepted=(), rejected=tuple(range(count)), reason="not wanted")
        assert isinstance(answer, HunkDecision)
        return answer
