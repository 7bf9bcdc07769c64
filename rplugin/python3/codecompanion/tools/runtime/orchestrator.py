"""One batch of tool calls, first in first out: setup → approval → cmds → output → on_exit.

Every call id is answered exactly once, whatever happens: the answer is recorded by `_record`,
which ignores a second answer, and `run` answers whatever is left when it ends for any reason.
Each stage that runs tool code or waits for the user runs as its own task, so `cancel` can stop
exactly that work (killing a running process, dropping a pending approval) and still answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...messages import ToolCall
from ..model import arguments
from ..model.registry import ToolEntry
from ..model.tool import Tool
from .approvals import ApprovalGate
from .context import CallContext
from .results import CallResult, OutputBuffer, Status, default_output
from .runner import Execution, bounded, invoke, run_cmds

log = logging.getLogger("codecompanion.tools")


@dataclass
class CallRun:
    """The working state of one call while the batch runs."""

    call: ToolCall
    index: int
    buffer: OutputBuffer
    entry: ToolEntry | None = None
    bound: Tool | None = None
    started: bool = False  # got as far as setup: on_exit is owed
    notes: list[str] = field(default_factory=list)
    execution: Execution = field(default_factory=Execution)
    reason: str | None = None
    detail: str = ""
    output_failed: bool = False


Stage = Callable[[CallRun], Awaitable[CallResult | None]]


def handlers_once(bound: Tool | None) -> bool:
    """True if consecutive calls of this tool share one setup/on_exit."""
    return bound is not None and bool(bound.opts.get("use_handlers_once"))


class Orchestrator:
    """Runs one batch for a ToolSystem."""

    def __init__(self, system: CallContext, calls: list[ToolCall]) -> None:
        self.system = system
        self.calls = list(calls)
        self.gate = ApprovalGate(system)
        self.runs = [
            CallRun(call, index, OutputBuffer(call.id)) for index, call in enumerate(calls)
        ]
        self.answered: dict[str, Status] = {}
        self.cancelled = False
        self.approve_all = False
        self._tasks: set[asyncio.Future[Any]] = set()
        self._held: Tool | None = None  # the last copy of a use_handlers_once tool, on_exit owed

    def cancel(self) -> None:
        """Stop the batch: the running stage is cancelled and every unanswered call is cancelled."""
        self.cancelled = True
        for task in list(self._tasks):
            task.cancel()

    @property
    def status(self) -> str:
        """The batch's status: cancelled, success (every call succeeded) or error."""
        if self.cancelled:
            return "cancelled"
        ok = all(status == "success" for status in self.answered.values())
        return "success" if ok else "error"

    async def run(self) -> dict[str, Status]:
        """Run every call; returns each call id's final status."""
        chat_id = self.system.chat_id
        self.system.reporter.fire(
            "ToolsStarted", {"id": chat_id, "calls": [c.id for c in self.calls]}
        )
        for run in self.runs:
            self.system.reporter.status(run.call, "pending")
        try:
            await self._run_all()
        except asyncio.CancelledError:
            self.cancelled = True
            self._answer_rest("cancelled")
            raise
        except Exception:
            log.exception("chat %s: the tool batch failed", chat_id)
            self._answer_rest("error")
        finally:
            self._answer_rest("cancelled" if self.cancelled else "error")
            self.system.reporter.fire("ToolsFinished", {"id": chat_id, "status": self.status})
        return dict(self.answered)

    async def _run_all(self) -> None:
        index = 0
        while index < len(self.runs):
            if self.cancelled:
                for run in self.runs[index:]:
                    self._record(run, await self._guarded(run, self._cancelled))
                break
            segment = self._segment(index)
            if len(segment) == 1:
                self._record(segment[0], await self._guarded(segment[0], self._whole))
                await self._after_call(index)
            else:
                await self._concurrent(segment)
            index += len(segment)
        await self._release_held()

    def _segment(self, index: int) -> list[CallRun]:
        """The call at `index`, or the run of consecutive read_only calls starting there."""
        segment = [self.runs[index]]
        while self._concurrent_ok(segment[-1]) and segment[-1].index + 1 < len(self.runs):
            following = self.runs[segment[-1].index + 1]
            if not self._concurrent_ok(following):
                break
            segment.append(following)
        return segment

    def _concurrent_ok(self, run: CallRun) -> bool:
        entry = self.system.offered_entry(run.call.name)
        return (
            entry is not None
            and bool(entry.opts.get("read_only"))
            and not handlers_once(entry.tool)
        )

    async def _concurrent(self, segment: list[CallRun]) -> None:
        """Approvals one at a time, in order; then the approved calls run together."""
        early: dict[int, CallResult] = {}
        ready: list[CallRun] = []
        for run in segment:
            stage = self._cancelled if self.cancelled else self._prepare
            result = await self._guarded(run, stage)
            if result is None:
                ready.append(run)
            else:
                early[run.index] = result
        stage = self._cancelled if self.cancelled else self._execute
        finished = await asyncio.gather(*(self._guarded(run, stage) for run in ready))
        late = {
            run.index: result
            for run, result in zip(ready, finished, strict=True)
            if result is not None
        }
        for run in segment:
            result = early.get(run.index) or late.get(run.index)
            if result is not None:
                self._record(run, result)

    async def _guarded(self, run: CallRun, stage: Stage) -> CallResult | None:
        """Run one stage as a cancellable task; a task cancelled before it began still answers."""
        task = asyncio.ensure_future(self._stage(run, stage))
        self._tasks.add(task)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the whole batch is being cancelled from outside
            task.cancel()
            raise
        finally:
            self._tasks.discard(task)
        if not task.cancelled():
            return task.result()
        if stage != self._cancelled:
            return await self._guarded(run, self._cancelled)
        return self._finish(run, "cancelled")

    async def _stage(self, run: CallRun, stage: Stage) -> CallResult | None:
        try:
            result = await stage(run)
        except asyncio.CancelledError:
            self.cancelled = True
            result = await self._cancelled(run)
        except Exception as exc:
            log.exception("call %s (%s) failed inside the tool system", run.call.id, run.call.name)
            result = self._fail(run, f"Internal error while running {run.call.name}: {exc}")
        if result is not None:
            await self._exit(run)
        return result

    async def _whole(self, run: CallRun) -> CallResult | None:
        result = await self._prepare(run)
        return result if result is not None else await self._execute(run)

    async def _prepare(self, run: CallRun) -> CallResult | None:
        """Look up, validate, bind, setup and approve; None when the call is ready to run."""
        call = run.call
        data = {"id": self.system.chat_id, "name": call.name, "call_id": call.id}
        self.system.reporter.fire("ToolStarted", {**data, "args": call.arguments})
        entry = run.entry = self.system.offered_entry(call.name)
        if entry is None:
            return self._fail(run, self.system.not_offered_message(call.name), "not offered")
        parsed = arguments.resolve(
            call.name, call.arguments, call.raw_arguments, entry.tool.parameters, entry.validator()
        )
        if parsed.note:
            run.notes.append(parsed.note)
        if parsed.args is None:
            return self._fail(run, parsed.error or "invalid arguments", "invalid arguments")
        bound = run.bound = entry.tool.bind(call, parsed.args, entry.config(), self.system)
        self.system.buffers[call.id] = run.buffer
        run.started = True
        shared = handlers_once(bound) and self._held is not None and self._held.name == bound.name
        if not shared and not await self._handler(run, "setup"):
            return self._finish(run, "error")
        queued = sum(
            1 for other in self.runs[run.index + 1 :] if other.call.id not in self.answered
        )
        verdict = await self.gate.check(bound, queued=queued, approve_all=self.approve_all)
        bound.state["approved"] = verdict.approved
        self.approve_all = self.approve_all or verdict.approve_all
        if verdict.action in ("deny", "error"):
            detail = "denied by rule" if verdict.action == "deny" else "invalid edit"
            return self._fail(run, verdict.reason or "not allowed", detail)
        if verdict.action == "reject":
            run.reason = verdict.reason
            return await self._rejected(run)
        if verdict.action == "cancel":
            self.cancelled = True
            return await self._cancelled(run)
        if verdict.args is not None:
            bound.args, bound.cmds = verdict.args, list(entry.tool.cmds)
            run.notes.append(verdict.note or "")
            if not shared and not await self._handler(run, "setup"):
                return self._finish(run, "error")
        return None

    async def _execute(self, run: CallRun) -> CallResult:
        """Run the approved call's cmds and its success/error output."""
        bound = run.bound
        assert bound is not None
        self.system.reporter.status(run.call, "running")

        async def on_success(stdout: list[Any]) -> None:
            await self._output(run, "success", bound.args, stdout)

        run.execution = await run_cmds(
            bound,
            cwd=self.system.cwd,
            timeout=self._timeout(bound),
            max_output=int(self.system.opts["max_process_bytes"]),
            on_success=on_success,
        )
        execution = run.execution
        if execution.status != "success":
            await self._output(run, "error", bound.args, execution.stderr, execution.stdout)
            if execution.status == "timeout":
                run.detail = f"timed out after {self._timeout(bound):g}s"
            return self._finish(run, execution.status)
        return self._finish(run, "error" if run.output_failed else "success")

    async def _rejected(self, run: CallRun) -> CallResult:
        bound = run.bound
        assert bound is not None
        await self._output(run, "rejected", bound.args, run.reason)
        reason = run.reason
        if reason and run.buffer.pieces and not any(reason in t for t, _ in run.buffer.pieces):
            run.buffer.add(f'The user gave this reason: "{reason}"')
        return self._finish(run, "rejected")

    async def _cancelled(self, run: CallRun) -> CallResult:
        """The call's answer after a cancel, from the tool's `output.cancelled` if it has one."""
        bound = run.bound
        if bound is None and run.entry is None:
            run.entry = self.system.offered_entry(run.call.name)
        if bound is None and run.entry is not None:
            call = run.call
            bound = run.bound = run.entry.tool.bind(
                call, call.arguments, run.entry.config(), self.system
            )
            self.system.buffers[call.id] = run.buffer
        if bound is not None:
            await self._output(run, "cancelled", bound.args)
        return self._finish(run, "cancelled")

    async def _output(self, run: CallRun, kind: str, *args: Any) -> None:
        """Call `output.<kind>(self, tools, cmd, ...)`; a failure is logged and marks the call."""
        bound = run.bound
        fn = bound.output.get(kind) if bound is not None else None
        if fn is None:
            return
        ok, _ = await self._callback(run, fn, kind, *args)
        if not ok and kind == "success":
            run.output_failed = True
            run.buffer.add(f"The {run.call.name} tool ran, but its success output failed.")

    async def _handler(self, run: CallRun, kind: str) -> bool:
        """Call `handlers.<kind>(self, tools)`; False (with an error piece) when it fails."""
        bound = run.bound
        fn = bound.handlers.get(kind) if bound is not None else None
        if fn is None:
            return True
        ok, _ = await self._callback(run, fn, kind)
        if not ok:
            run.execution.stderr = [f"The {run.call.name} tool's {kind} step failed."]
        return ok

    async def _callback(
        self, run: CallRun, fn: Callable[..., Any], kind: str, *args: Any
    ) -> tuple[bool, Any]:
        bound = run.bound
        assert bound is not None
        try:
            finished, value = await bounded(
                invoke(fn, bound, self.system, *args), self._timeout(bound)
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: %s failed", run.call.name, kind)
            return False, None
        if not finished:
            log.error("%s: %s timed out", run.call.name, kind)
        return finished, value

    async def _exit(self, run: CallRun) -> None:
        """Call on_exit, unless a following call of the same use_handlers_once tool shares it."""
        bound = run.bound
        if bound is None or not run.started:
            return
        if handlers_once(bound):
            following = self._following(run.index)
            self._held = bound if following == bound.name and not self.cancelled else None
            if self._held is not None:
                return
        await self._handler(run, "on_exit")

    async def _after_call(self, index: int) -> None:
        held = self._held
        if held is not None and (self._following(index) != held.name or self.cancelled):
            await self._release_held()

    def _following(self, index: int) -> str | None:
        """The tool name of the call after `index`, if any."""
        return self.runs[index + 1].call.name if index + 1 < len(self.runs) else None

    async def _release_held(self) -> None:
        held, self._held = self._held, None
        if held is None or held.call is None:
            return
        run = CallRun(held.call, -1, OutputBuffer(held.call.id, closed=True), bound=held)
        await self._guarded_exit(run)

    async def _guarded_exit(self, run: CallRun) -> None:
        task = asyncio.ensure_future(self._handler(run, "on_exit"))
        self._tasks.add(task)
        try:
            await asyncio.wait({task})
        finally:
            self._tasks.discard(task)

    def _timeout(self, bound: Tool) -> float | None:
        value = bound.opts.get("timeout", self.system.opts["timeout"])
        return None if value is None else float(value)

    def _fail(self, run: CallRun, message: str, detail: str = "") -> CallResult:
        run.buffer.add(message)
        run.detail = detail or run.detail
        return self._finish(run, "error")

    def _finish(self, run: CallRun, status: Status) -> CallResult:
        execution = run.execution
        errors = execution.stderr or ([run.detail] if run.detail else [])
        default = default_output(status, run.call.name, execution.stdout, errors, run.reason)
        limit = int(self.system.opts["max_output"])
        result = run.buffer.result(status, default, [n for n in run.notes if n], limit)
        return CallResult(
            result.status, result.for_llm, result.for_user, result.full_output, run.detail
        )

    def _record(self, run: CallRun, result: CallResult | None) -> None:
        """Hand the call's one answer to the chat; a second answer for the same id is dropped."""
        call = run.call
        if result is None or call.id in self.answered:
            return
        self.answered[call.id] = result.status
        self.system.buffers.pop(call.id, None)
        self.system.reporter.deliver(call, result)

    def _answer_rest(self, status: Status) -> None:
        """Answer every call still unanswered (synchronously: this may run while cancelled)."""
        for run in self.runs:
            if run.call.id not in self.answered:
                self._record(run, self._finish(run, status))
