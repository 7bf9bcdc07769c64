"""Running a batch of tool calls: each call goes bind → setup → approval → run → exit, in
order, and gets exactly one result.

`Orchestrator` is the batch: consecutive read_only calls are approved one at a time and then run
together; cancellation lives in `_step` (each step of a call runs as a task `cancel` can stop,
killing a running process, dropping a pending approval, and a stopped step is answered
`cancelled`). A call's code is an `Invocation` (model/contract.py) whatever the tool is written
as; each step answers with a `Reply`, and `_result` is the one place a Reply becomes the call's
ToolResult. `BatchResults` (protocol.py) keeps the rule that every call id gets exactly one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

from ...messages import Status, ToolCall, ToolResult
from ..model import arguments
from ..model.contract import Invocation, Reply, default_output
from ..model.registry import ToolEntry
from .approval_policy import HookWord
from .approvals import ApprovalGate, CallQuestions, Verdict
from .protocol import BatchResults, CallContext, capped

log = logging.getLogger("codecompanion.tools")


@dataclass
class CallRun:
    """The working state of one call while the batch runs."""

    call: ToolCall
    index: int
    entry: ToolEntry | None = None
    code: Invocation | None = None  # the call's own state and steps, once it is bound
    started: bool = False  # got as far as setup: its exit is owed
    notes: list[str] = field(default_factory=list)
    hook: HookWord | None = None  # the PreToolUse hooks' "ask" or "allow"


Step = Callable[[CallRun], Awaitable[Reply | None]]


def handlers_once(code: Invocation | None) -> bool:
    """True if consecutive calls of this tool share one setup/exit (`use_handlers_once`)."""
    return code is not None and bool(code.opts.get("use_handlers_once"))


class Orchestrator:
    """Runs one batch for a tool system (seen as a CallContext)."""

    def __init__(self, context: CallContext, calls: list[ToolCall]) -> None:
        self.context = context
        self.reporter = context.reporter
        self.calls = list(calls)
        self.gate = ApprovalGate(context)
        self.runs = [CallRun(call, index) for index, call in enumerate(calls)]
        self.answers = BatchResults(self.calls, self.reporter.deliver)
        self.cancelled = False
        self.approve_all = False
        self._tasks: set[asyncio.Future[Any]] = set()
        # The last call of a use_handlers_once tool whose exit waits for the next call.
        self._exit_pending: CallRun | None = None

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
            self.answers.answer_rest(lambda call: self._interrupted(runs[call.id], status))
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
            and not entry.tool.opts.get("use_handlers_once")
        )

    async def _concurrent(self, segment: list[CallRun]) -> None:
        """Approvals one at a time, in order; then the approved calls run together."""
        results = await self._prepare_in_order(segment)
        ready = [run for run in segment if results[run.index] is None]
        finished = await asyncio.gather(*(self._step(run, self._execute) for run in ready))
        results.update((run.index, result) for run, result in zip(ready, finished, strict=True))
        for run in segment:
            self._answer(run, results[run.index])

    async def _prepare_in_order(self, segment: list[CallRun]) -> dict[int, ToolResult | None]:
        """Each call's setup and approval, in order, as one step `cancel` can stop (one task for
        the segment, not one per call): as `_step` does, a stop answers the call it interrupted
        and every later one `cancelled`."""
        results: dict[int, ToolResult | None] = {}

        async def in_order() -> None:
            for run in segment:
                if self.cancelled:
                    return
                results[run.index] = await self._attempt(run, self._prepare)

        if not self.cancelled:
            stopped, _ = await self._stoppable(in_order())
            if stopped:
                self.cancel()  # however the step was stopped, the rest of the batch is cancelled
        for run in segment:
            if run.index not in results:
                results[run.index] = await self._step(run, self._cancelled)
        return results

    # Cancellation, in one place

    async def _step(self, run: CallRun, step: Step) -> ToolResult | None:
        """Run one step of a call where `cancel` can stop it; a stopped step answers `cancelled`.

        After a batch is cancelled every step is `_cancelled`: the tool's own cancelled answer.
        """
        if self.cancelled:
            step = self._cancelled
        stopped, result = await self._stoppable(self._attempt(run, step))
        if stopped and step != self._cancelled:
            self.cancel()  # however the step was stopped, the rest of the batch is cancelled
            stopped, result = await self._stoppable(self._attempt(run, self._cancelled))
        return self._interrupted(run, "cancelled") if stopped else result

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

    async def _attempt(self, run: CallRun, step: Step) -> ToolResult | None:
        """One step; an error in the tool system is the call's error; an answer owes the exit."""
        try:
            reply = await step(run)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("call %s (%s) failed inside the tool system", run.call.id, run.call.name)
            reply = _failed(f"Internal error while running {run.call.name}: {exc}")
        if reply is None:
            return None
        result = self._result(run, reply)
        await self._exit(run)
        return result

    # One call: bind → setup → approval → run (→ exit, in _attempt)

    async def _call(self, run: CallRun) -> Reply | None:
        reply = await self._prepare(run)
        return reply if reply is not None else await self._execute(run)

    async def _prepare(self, run: CallRun) -> Reply | None:
        """Look up, validate, bind, setup, hooks and approve; None when the call may run."""
        reply = self._bind(run)
        if reply is None:
            reply = await self._setup(run)
        if reply is None:
            reply = await self._hooked_before(run)
        return reply if reply is not None else await self._approve(run)

    async def _hooked_before(self, run: CallRun) -> Reply | None:
        """PreToolUse hooks, before any question: a block is the call's error, with the reason;
        their context heads the result; an "ask" or "allow" goes to the gate; new arguments
        replace the model's."""
        hooks = self.context.hooks
        if hooks is None or run.code is None:
            return None
        said = await hooks.before_tool(run.call, run.code.args, run.code.opts)
        run.notes += [f"A hook before this call says: {text}" for text in said.context]
        if said.blocked:
            return _failed(f"A hook blocked this call: {said.reason}", "blocked by a hook")
        if said.permission is not None:
            run.hook = HookWord(said.permission, tuple(said.asking))
        if said.updated_input is None:
            return None
        return await self._hook_arguments(run, said.updated_input)

    async def _hook_arguments(self, run: CallRun, given: dict[str, Any]) -> Reply | None:
        """The call with the arguments a hook gave: checked against the tool's schema as the
        model's are (invalid: one line to the model, nothing runs), then set up again."""
        code, entry = run.code, run.entry
        assert code is not None and entry is not None
        args, _coerced = arguments.conform(given, entry.tool.parameters)
        problems = arguments.violations(args, entry.tool.parameters, entry.validator())
        if problems:
            listed = " ".join("; ".join(problems).split())  # one line
            message = f"A hook gave this call arguments {code.name} cannot take: {listed}"
            return _failed(message, "invalid arguments from a hook")
        code.edited(args)
        shown = json.dumps(args, ensure_ascii=False)
        run.notes.append(f"Note: a hook changed this call's arguments; it runs with {shown}.")
        return await self._setup(run)

    async def _hooked_after(self, run: CallRun, reply: Reply) -> Reply:
        """PostToolUse hooks: what they tell the model joins the call's answer."""
        hooks = self.context.hooks
        if hooks is None or run.code is None:
            return reply
        result = self._result(run, reply)
        said = await hooks.after_tool(run.call, run.code.args, result, run.code.opts)
        notes = [f"A hook after this call says: {reason}" for reason in said.reasons]
        notes += said.context
        if not notes:
            return reply
        return replace(reply, for_llm="\n\n".join([reply.for_llm, *notes]))

    def _bind(self, run: CallRun) -> Reply | None:
        """Find the offered tool, repair and validate the arguments, and start the call."""
        call = run.call
        data = {"id": self.context.chat_id, "name": call.name, "call_id": call.id}
        self.reporter.fire("ToolStarted", {**data, "args": call.arguments})
        entry = run.entry = self.context.offered_entry(call.name)
        if entry is None:
            return _failed(self.context.not_offered_message(call.name), "not offered")
        parsed = arguments.resolve(
            call.name, call.arguments, call.raw_arguments, entry.tool.parameters, entry.validator()
        )
        if parsed.note:
            run.notes.append(parsed.note)
        if parsed.args is None:
            return _failed(parsed.error or "invalid arguments", "invalid arguments")
        run.code = self._start(run, entry, parsed.args)
        run.started = True
        return None

    def _start(self, run: CallRun, entry: ToolEntry, args: dict[str, Any]) -> Invocation:
        """The call's Invocation, with the ToolContext its code gets."""
        asks = CallQuestions(self.gate)
        ctx = self.context.tool_context(run.call, entry.tool.opts, asks, self.cancel)
        code = asks.invocation = entry.tool.start(ctx, args, entry.config())
        return code

    async def _setup(self, run: CallRun) -> Reply | None:
        """The call's setup, unless the previous call of a use_handlers_once tool ran it."""
        code, shared = run.code, self._exit_pending
        assert code is not None
        if handlers_once(code) and shared is not None and shared.code is not None:
            if shared.code.name == code.name:
                return None
        return await code.setup()

    async def _approve(self, run: CallRun) -> Reply | None:
        """Ask the approval gate; None when the call may run."""
        code = run.code
        assert code is not None
        queued = sum(
            1 for other in self.runs[run.index + 1 :] if not self.answers.has(other.call.id)
        )
        decides, hook = code.own_approval, run.hook
        verdict = None if decides is None else await self.gate.decided_by(code, decides)
        # A tool's own approval step decides first; a hook's "ask" is asked after its yes.
        if verdict is None or (hook is not None and hook.asks and verdict.action == "run"):
            verdict = await self.gate.check(
                code, queued=queued, approve_all=self.approve_all, hook=hook
            )
        code.approved = verdict.approved
        self.approve_all = self.approve_all or verdict.approve_all
        return await self._follow(run, code, verdict)

    async def _follow(self, run: CallRun, code: Invocation, verdict: Verdict) -> Reply | None:
        """Act on the gate's verdict: refuse, reject, cancel, or run (with edited arguments)."""
        if verdict.action in ("deny", "error"):
            detail = "denied by rule" if verdict.action == "deny" else "invalid edit"
            return _failed(verdict.reason or "not allowed", detail)
        if verdict.action == "reject":
            return await code.rejected(verdict.reason)
        if verdict.action == "cancel":  # the user cancelled the batch: _step answers the call
            raise asyncio.CancelledError
        if verdict.args is not None:
            code.edited(verdict.args)
            run.notes.append(verdict.note or "")
            return await self._setup(run)
        return None

    async def _execute(self, run: CallRun) -> Reply:
        """Run the approved call."""
        code = run.code
        assert code is not None
        # The tool line shows the arguments that run (after an edit or a repair).
        self.reporter.status(replace(run.call, arguments=code.args), "running")
        # While the code runs, what changes in the project may be its doing (see checkpoints),
        # unless the tool writes nothing or tells what it writes.
        listed = bool(code.opts.get("read_only") or code.opts.get("lists_writes"))
        self.reporter.running(run.call, listed)
        try:
            reply = await code.run()
        finally:
            self.reporter.ran(run.call, listed)
        return await self._hooked_after(run, reply)

    async def _cancelled(self, run: CallRun) -> Reply:
        """The call's answer after a cancel, from the tool's own if it has one."""
        if run.code is None and run.entry is None:
            run.entry = self.context.offered_entry(run.call.name)
        if run.code is None and run.entry is not None:
            run.code = self._start(run, run.entry, dict(run.call.arguments))
        if run.code is None:
            return Reply("cancelled", *default_output("cancelled", run.call.name, [], []))
        return await run.code.cancelled()

    # The exit, shared by consecutive calls of a use_handlers_once tool

    async def _exit(self, run: CallRun) -> None:
        """The call's exit, unless a following call of the same use_handlers_once tool shares it."""
        code = run.code
        if code is None or not run.started:
            return
        if handlers_once(code):
            following = self._following(run.index)
            shared = following == code.name and not self.cancelled
            self._exit_pending = run if shared else None
            if shared:
                return
        await code.exit()

    async def _after_call(self, index: int) -> None:
        pending = self._exit_pending
        name = pending.code.name if pending is not None and pending.code is not None else None
        if pending is not None and (self._following(index) != name or self.cancelled):
            await self._exit_shared()

    def _following(self, index: int) -> str | None:
        """The tool name of the call after `index`, if any."""
        return self.runs[index + 1].call.name if index + 1 < len(self.runs) else None

    async def _exit_shared(self) -> None:
        """The exit a run of use_handlers_once calls shares, after its last call."""
        run, self._exit_pending = self._exit_pending, None
        if run is not None and run.code is not None:
            await self._stoppable(run.code.exit())

    # Results

    def _result(self, run: CallRun, reply: Reply) -> ToolResult:
        """The one place a call's answer becomes its ToolResult: the notes for the model (a
        repair, an edit) first, both texts capped, the uncut text kept."""
        for_llm = reply.for_llm.strip() or "(no output)"
        notes = [note for note in run.notes if note]
        if notes:
            for_llm = "\n".join(notes) + "\n\n" + for_llm
        result = ToolResult(reply.status, for_llm, reply.for_user, None, reply.detail)
        return capped(result, int(self.context.opts["max_output"]))

    def _interrupted(self, run: CallRun, status: Status) -> ToolResult:
        """The answer of a call cut short: what its code has so far, else the default."""
        if run.code is not None:
            return self._result(run, run.code.interrupted(status))
        return self._result(run, Reply(status, *default_output(status, run.call.name, [], [])))

    def _answer(self, run: CallRun, result: ToolResult | None) -> None:
        if result is not None:
            self.answers.record(run.call, result)


def _failed(message: str, detail: str = "") -> Reply:
    """An error answer the tool system gives (not offered, invalid arguments, denied)."""
    return Reply("error", message, None, detail)
