"""One batch of tool calls, first in first out; each call goes setup → approval → cmds → output →
on_exit.

`Answers` (answers.py) keeps the rule that every call id gets exactly one result. Cancellation
lives in `_step`: each step of a call runs as a task `cancel` can stop (killing a running
process, dropping a pending approval), and a stopped step is answered `cancelled`. Consecutive
read_only calls are approved one at a time and then run together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

from ...messages import ToolCall
from ..model import arguments
from ..model.tool import Tool
from .answers import Answers
from .approvals import ApprovalGate, Verdict
from .batch import CallContext
from .call_run import CallRun, Step, handlers_once
from .callbacks import ToolCode
from .results import CallResult, OutputBuffer, Status
from .runner import run_cmds

log = logging.getLogger("codecompanion.tools")


class Orchestrator:
    """Runs one batch for a tool system (seen as a CallContext)."""

    def __init__(self, context: CallContext, calls: list[ToolCall]) -> None:
        self.context = context
        self.reporter = context.reporter
        self.calls = list(calls)
        self.gate = ApprovalGate(context)
        self.code = ToolCode(context)
        self.runs = [
            CallRun(call, index, OutputBuffer(call.id)) for index, call in enumerate(calls)
        ]
        self.answers = Answers(self.calls, self._deliver)
        self.cancelled = False
        self.approve_all = False
        self._tasks: set[asyncio.Future[Any]] = set()
        # The last call of a use_handlers_once tool whose on_exit waits for the next call.
        self._exit_pending: Tool | None = None

    def cancel(self) -> None:
        """Stop the batch: the running step is stopped and every unanswered call is cancelled.

        The only place `cancelled` is set: a stop by the user, the chat, a tool's own
        CancelledError and the "cancel" answer to an approval question all come here.
        """
        self.cancelled = True
        for task in list(self._tasks):
            task.cancel()

    @property
    def status(self) -> str:
        """The batch's status: cancelled, success (every call succeeded) or error."""
        if self.cancelled:
            return "cancelled"
        ok = all(status == "success" for status in self.answers.statuses.values())
        return "success" if ok else "error"

    async def run(self) -> dict[str, Status]:
        """Run every call; returns each call id's final status."""
        chat_id = self.context.chat_id
        self.reporter.fire("ToolsStarted", {"id": chat_id, "calls": [c.id for c in self.calls]})
        for run in self.runs:
            self.reporter.status(run.call, "pending")
        try:
            await self._run_all()
        except asyncio.CancelledError:  # the chat's turn was cancelled from outside
            self.cancel()
            raise
        except Exception:
            log.exception("chat %s: the tool batch failed", chat_id)
        finally:
            status: Status = "cancelled" if self.cancelled else "error"
            runs = {run.call.id: run for run in self.runs}
            self.answers.answer_rest(lambda call: self._finish(runs[call.id], status))
            self.reporter.fire("ToolsFinished", {"id": chat_id, "status": self.status})
        return dict(self.answers.statuses)

    async def _run_all(self) -> None:
        index = 0
        while index < len(self.runs):
            if self.cancelled:
                for run in self.runs[index:]:
                    self._answer(run, await self._step(run, self._cancelled))
                break
            segment = self._segment(index)
            if len(segment) == 1:
                self._answer(segment[0], await self._step(segment[0], self._call))
                await self._after_call(index)
            else:
                await self._concurrent(segment)
            index += len(segment)
        await self._exit_shared()

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
        entry = self.context.offered_entry(run.call.name)
        return (
            entry is not None
            and bool(entry.opts.get("read_only"))
            and not handlers_once(entry.tool)
        )

    async def _concurrent(self, segment: list[CallRun]) -> None:
        """Approvals one at a time, in order; then the approved calls run together."""
        results: dict[int, CallResult | None] = {}
        for run in segment:
            results[run.index] = await self._step(run, self._prepare)
        ready = [run for run in segment if results[run.index] is None]
        finished = await asyncio.gather(*(self._step(run, self._execute) for run in ready))
        results.update((run.index, result) for run, result in zip(ready, finished, strict=True))
        for run in segment:
            self._answer(run, results[run.index])

    # Cancellation, in one place

    async def _step(self, run: CallRun, step: Step) -> CallResult | None:
        """Run one step of a call where `cancel` can stop it; a stopped step answers `cancelled`.

        After a batch is cancelled every step is `_cancelled`: the tool's `output.cancelled`.
        """
        if self.cancelled:
            step = self._cancelled
        stopped, result = await self._stoppable(self._attempt(run, step))
        if stopped and step != self._cancelled:
            self.cancel()  # however the step was stopped, the rest of the batch is cancelled
            stopped, result = await self._stoppable(self._attempt(run, self._cancelled))
        return self._finish(run, "cancelled") if stopped else result

    async def _stoppable(self, work: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
        """Run `work` as a task `cancel` stops: (True, None) if stopped, else (False, value)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the whole batch is being cancelled from outside
            task.cancel()
            raise
        finally:
            self._tasks.discard(task)
        return (True, None) if task.cancelled() else (False, task.result())

    async def _attempt(self, run: CallRun, step: Step) -> CallResult | None:
        """One step; an error in the tool system is the call's error; a result owes on_exit."""
        try:
            result = await step(run)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("call %s (%s) failed inside the tool system", run.call.id, run.call.name)
            result = self._fail(run, f"Internal error while running {run.call.name}: {exc}")
        if result is not None:
            await self._exit(run)
        return result

    # One call: setup → approval → cmds → output (→ on_exit, in _attempt)

    async def _call(self, run: CallRun) -> CallResult | None:
        result = await self._prepare(run)
        return result if result is not None else await self._execute(run)

    async def _prepare(self, run: CallRun) -> CallResult | None:
        """Look up, validate, bind, setup and approve; None when the call is ready to run."""
        refused = self._bind(run)
        if refused is not None:
            return refused
        if not await self._setup(run):
            return self._finish(run, "error")
        return await self._approve(run)

    def _bind(self, run: CallRun) -> CallResult | None:
        """Find the offered tool, repair and validate the arguments, and bind the call's copy."""
        call = run.call
        data = {"id": self.context.chat_id, "name": call.name, "call_id": call.id}
        self.reporter.fire("ToolStarted", {**data, "args": call.arguments})
        entry = run.entry = self.context.offered_entry(call.name)
        if entry is None:
            return self._fail(run, self.context.not_offered_message(call.name), "not offered")
        parsed = arguments.resolve(
            call.name, call.arguments, call.raw_arguments, entry.tool.parameters, entry.validator()
        )
        if parsed.note:
            run.notes.append(parsed.note)
        if parsed.args is None:
            return self._fail(run, parsed.error or "invalid arguments", "invalid arguments")
        run.tool = entry.tool.bind(call, parsed.args, entry.config(), self.code.tools_for(run))
        self.context.buffers[call.id] = run.buffer
        run.started = True
        return None

    async def _setup(self, run: CallRun) -> bool:
        """`handlers.setup`, unless the previous call of a use_handlers_once tool already ran it."""
        tool, shared = run.tool, self._exit_pending
        if handlers_once(tool) and shared is not None and tool is not None:
            if shared.name == tool.name:
                return True
        return await self.code.handler(run, "setup") and await self.code.override_cmds(run)

    async def _approve(self, run: CallRun) -> CallResult | None:
        """Ask the approval gate; None when the call may run."""
        tool = run.tool
        assert tool is not None
        queued = sum(
            1 for other in self.runs[run.index + 1 :] if not self.answers.has(other.call.id)
        )
        decide = tool.handlers.get("approved")
        if decide is not None:
            verdict = await self.gate.decided_by(tool, lambda: self.code.decision(run, decide))
        else:
            verdict = await self.gate.check(tool, queued=queued, approve_all=self.approve_all)
        tool.state["approved"] = verdict.approved
        self.approve_all = self.approve_all or verdict.approve_all
        return await self._follow(run, verdict)

    async def _follow(self, run: CallRun, verdict: Verdict) -> CallResult | None:
        """Act on the gate's verdict: refuse, reject, cancel, or run (with edited arguments)."""
        if verdict.action in ("deny", "error"):
            detail = "denied by rule" if verdict.action == "deny" else "invalid edit"
            return self._fail(run, verdict.reason or "not allowed", detail)
        if verdict.action == "reject":
            run.reason = verdict.reason
            return await self._rejected(run)
        if verdict.action == "cancel":  # the user cancelled the batch: _step answers the call
            raise asyncio.CancelledError
        if verdict.args is not None:
            assert run.tool is not None and run.entry is not None
            run.tool.args, run.tool.cmds = verdict.args, list(run.entry.tool.cmds)
            run.notes.append(verdict.note or "")
            if not await self._setup(run):
                return self._finish(run, "error")
        return None

    async def _execute(self, run: CallRun) -> CallResult:
        """Run the approved call's cmds and its success/error output."""
        tool = run.tool
        assert tool is not None
        # The tool line shows the arguments that run (after an edit or a repair).
        self.reporter.status(replace(run.call, arguments=tool.args), "running")

        async def on_success(stdout: list[Any]) -> None:
            await self.code.output(run, "success", stdout)

        execution = await run_cmds(
            tool,
            cwd=self.context.cwd,
            timeout=self.code.timeout(tool),
            max_output=int(self.context.opts["max_process_bytes"]),
            on_success=on_success,
            execution=run.execution,
        )
        await self.code.output_prompt(run)
        if execution.status != "success":
            await self.code.output(run, "error", execution.stderr, execution.stdout)
            if execution.status == "timeout":
                run.detail = f"timed out after {self.code.timeout(tool):g}s"
            return self._finish(run, execution.status)
        return self._finish(run, "error" if run.output_failed else "success")

    async def _rejected(self, run: CallRun) -> CallResult:
        tool = run.tool
        assert tool is not None
        await self.code.output(run, "rejected")
        reason = run.reason
        if reason and run.buffer.pieces and not any(reason in t for t, _ in run.buffer.pieces):
            run.buffer.add(f'The user gave this reason: "{reason}"')
        return self._finish(run, "rejected")

    async def _cancelled(self, run: CallRun) -> CallResult:
        """The call's answer after a cancel, from the tool's `output.cancelled` if it has one."""
        if run.tool is None and run.entry is None:
            run.entry = self.context.offered_entry(run.call.name)
        if run.tool is None and run.entry is not None:
            call = run.call
            config = run.entry.config()
            run.tool = run.entry.tool.bind(call, call.arguments, config, self.code.tools_for(run))
            self.context.buffers[call.id] = run.buffer
        if run.tool is not None:
            await self.code.output(run, "cancelled")
        return self._finish(run, "cancelled")

    # on_exit, shared by consecutive calls of a use_handlers_once tool

    async def _exit(self, run: CallRun) -> None:
        """Call on_exit, unless a following call of the same use_handlers_once tool shares it."""
        tool = run.tool
        if tool is None or not run.started:
            return
        if handlers_once(tool):
            following = self._following(run.index)
            shared = following == tool.name and not self.cancelled
            self._exit_pending = tool if shared else None
            if shared:
                return
        await self.code.handler(run, "on_exit")

    async def _after_call(self, index: int) -> None:
        pending = self._exit_pending
        if pending is not None and (self._following(index) != pending.name or self.cancelled):
            await self._exit_shared()

    def _following(self, index: int) -> str | None:
        """The tool name of the call after `index`, if any."""
        return self.runs[index + 1].call.name if index + 1 < len(self.runs) else None

    async def _exit_shared(self) -> None:
        """The on_exit a run of use_handlers_once calls shares, after its last call."""
        tool, self._exit_pending = self._exit_pending, None
        if tool is None or tool.call is None:
            return
        run = CallRun(tool.call, -1, OutputBuffer(tool.call.id, closed=True), tool=tool)
        await self._stoppable(self.code.handler(run, "on_exit"))

    # Results

    def _fail(self, run: CallRun, message: str, detail: str = "") -> CallResult:
        return run.fail(message, detail, int(self.context.opts["max_output"]))

    def _finish(self, run: CallRun, status: Status) -> CallResult:
        return run.finish(status, int(self.context.opts["max_output"]))

    def _answer(self, run: CallRun, result: CallResult | None) -> None:
        if result is not None:
            self.answers.record(run.call, result)

    def _deliver(self, call: ToolCall, result: CallResult) -> None:
        """Close the call's `add_tool_output` and hand its result to the chat."""
        self.context.buffers.pop(call.id, None)
        self.reporter.deliver(call, result)
