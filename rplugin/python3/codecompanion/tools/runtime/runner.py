"""Running a batch of tool calls: each call goes setup → approval → cmds → output → on_exit, in
order, and gets exactly one result.

`Orchestrator` is the batch: consecutive read_only calls are approved one at a time and then run
together; cancellation lives in `_step` (each step of a call runs as a task `cancel` can stop,
killing a running process, dropping a pending approval, and a stopped step is answered
`cancelled`). `BatchResults` keeps the rule that every call id gets exactly one result. `CodeCaller`
calls the tool's handlers and outputs in the form each is written in (model/tool.py), under
the tool's time limit; `run_cmds` runs its cmds: functions (sync, async or through
`output_handler`) and commands (process.py). `CallTools` and `CmdOpts` are the objects tool code
receives.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import re
import shlex
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ...errors import ToolError
from ...messages import Status, ToolCall, ToolResult
from ...sandbox.aftermath import settle
from ...sandbox.commands import CommandSandbox, sandbox_of
from ..model import arguments
from ..model.function_tool import timeout_seconds
from ..model.registry import ToolEntry
from ..model.tool import Tool, cmd_form, invoke, output_form
from ..model.tool import call as call_fn
from .approvals import ApprovalGate, Verdict
from .child_env import tool_environment
from .protocol import CallContext, OutputBuffer, default_output

log = logging.getLogger("codecompanion.tools")

_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
_CANCEL_GRACE = 5.0  # seconds a cancelled cmd gets to clean up (kill its processes)
_META_KEYS = ("tools", "cmd", "stdout", "stderr")

CmdStatus = Literal["success", "error", "timeout"]


@dataclass(frozen=True)
class CmdOutput:
    """The outcome of one cmd: `data` is what the next cmd gets as input and outputs receive."""

    status: CmdStatus
    data: Any = None

    def as_input(self) -> dict[str, Any]:
        """CodeCompanion's `{status, data}` shape, passed to the next cmd."""
        return {"status": self.status, "data": self.data}


@dataclass
class CallOutput:
    """All cmds of one call: `stdout` holds each successful cmd's data, `stderr` the failure.

    `cmd` is the cmd that ran last: a command's argv as run, or the function.
    """

    status: CmdStatus = "success"
    stdout: list[Any] = field(default_factory=list)
    stderr: list[Any] = field(default_factory=list)
    cmd: Any = None


class Orchestrator:
    """Runs one batch for a tool system (seen as a CallContext)."""

    def __init__(self, context: CallContext, calls: list[ToolCall]) -> None:
        self.context = context
        self.reporter = context.reporter
        self.calls = list(calls)
        self.gate = ApprovalGate(context)
        self.code = CodeCaller(context)
        self.runs = [
            CallRun(call, index, OutputBuffer(call.id)) for index, call in enumerate(calls)
        ]
        self.answers = BatchResults(self.calls, self._deliver)
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

    async def _attempt(self, run: CallRun, step: Step) -> ToolResult | None:
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

    async def _call(self, run: CallRun) -> ToolResult | None:
        result = await self._prepare(run)
        return result if result is not None else await self._execute(run)

    async def _prepare(self, run: CallRun) -> ToolResult | None:
        """Look up, validate, bind, setup and approve; None when the call is ready to run."""
        refused = self._bind(run)
        if refused is not None:
            return refused
        if not await self._setup(run):
            return self._finish(run, "error")
        blocked = await self._hooked_before(run)
        return blocked if blocked is not None else await self._approve(run)

    async def _hooked_before(self, run: CallRun) -> ToolResult | None:
        """PreToolUse hooks, before any question: a block is the call's error, with the reason."""
        hooks = self.context.hooks
        if hooks is None or run.tool is None:
            return None
        said = await hooks.before_tool(run.call, run.tool.args)
        if not said.blocked:
            return None
        return self._fail(run, f"A hook blocked this call: {said.reason}", "blocked by a hook")

    async def _hooked_after(self, run: CallRun, result: ToolResult) -> ToolResult:
        """PostToolUse hooks: what they tell the model joins the call's result."""
        hooks = self.context.hooks
        if hooks is None or run.tool is None:
            return result
        said = await hooks.after_tool(run.call, run.tool.args, result)
        notes = [f"A hook after this call says: {reason}" for reason in said.reasons]
        notes += said.context
        if not notes:
            return result
        return replace(result, for_llm="\n\n".join([result.for_llm, *notes]))

    def _bind(self, run: CallRun) -> ToolResult | None:
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

    async def _approve(self, run: CallRun) -> ToolResult | None:
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

    async def _follow(self, run: CallRun, verdict: Verdict) -> ToolResult | None:
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

    async def _execute(self, run: CallRun) -> ToolResult:
        """Run the approved call's cmds and its success/error output."""
        tool = run.tool
        assert tool is not None
        # The tool line shows the arguments that run (after an edit or a repair).
        self.reporter.status(replace(run.call, arguments=tool.args), "running")

        async def on_success(stdout: list[Any]) -> None:
            await self.code.output(run, "success", stdout)

        # While the code runs, what changes in the project may be its doing (see checkpoints),
        # unless the tool writes nothing or tells what it writes.
        listed = bool(tool.opts.get("read_only") or tool.opts.get("lists_writes"))
        self.reporter.running(run.call, listed)
        try:
            execution = await run_cmds(
                tool,
                cwd=self.context.cwd,
                timeout=self.code.timeout(tool),
                max_output=int(self.context.opts["max_process_bytes"]),
                on_success=on_success,
                execution=run.execution,
            )
        finally:
            self.reporter.ran(run.call, listed)
        await self.code.output_prompt(run)
        if execution.status != "success":
            await self.code.output(run, "error", execution.stderr, execution.stdout)
            if execution.status == "timeout":
                run.detail = f"timed out after {self.code.timeout(tool):g}s"
            return await self._hooked_after(run, self._finish(run, execution.status))
        status: Status = "error" if run.output_failed else "success"
        return await self._hooked_after(run, self._finish(run, status))

    async def _rejected(self, run: CallRun) -> ToolResult:
        tool = run.tool
        assert tool is not None
        await self.code.output(run, "rejected")
        reason = run.reason
        if reason and run.buffer.pieces and not any(reason in t for t, _ in run.buffer.pieces):
            run.buffer.add(f'The user gave this reason: "{reason}"')
        return self._finish(run, "rejected")

    async def _cancelled(self, run: CallRun) -> ToolResult:
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

    def _fail(self, run: CallRun, message: str, detail: str = "") -> ToolResult:
        return run.fail(message, detail, int(self.context.opts["max_output"]))

    def _finish(self, run: CallRun, status: Status) -> ToolResult:
        return run.finish(status, int(self.context.opts["max_output"]))

    def _answer(self, run: CallRun, result: ToolResult | None) -> None:
        if result is not None:
            self.answers.record(run.call, result)

    def _deliver(self, call: ToolCall, result: ToolResult) -> None:
        """Close the call's `add_tool_output` and hand its result to the chat."""
        self.context.buffers.pop(call.id, None)
        self.reporter.deliver(call, result)


# One call's working state


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
    execution: CallOutput = field(default_factory=CallOutput)
    reason: str | None = None
    detail: str = ""
    output_failed: bool = False

    def fail(self, message: str, detail: str, limit: int) -> ToolResult:
        """An error result saying `message` (`detail` is shown beside the tool line)."""
        self.buffer.add(message)
        self.detail = detail or self.detail
        return self.finish("error", limit)

    def finish(self, status: Status, limit: int) -> ToolResult:
        """The call's result: what the tool added, or the default text; capped at `limit`."""
        execution = self.execution
        errors = execution.stderr or ([self.detail] if self.detail else [])
        default = default_output(status, self.call.name, execution.stdout, errors, self.reason)
        result = self.buffer.result(status, default, [n for n in self.notes if n], limit)
        return ToolResult(
            result.status, result.for_llm, result.for_user, result.full_output, self.detail
        )


Step = Callable[[CallRun], Awaitable[ToolResult | None]]


def handlers_once(tool: Tool | None) -> bool:
    """True if consecutive calls of this tool share one setup/on_exit."""
    return tool is not None and bool(tool.opts.get("use_handlers_once"))


class BatchResults:
    """The results of one batch's calls: one per call id, delivered once."""

    def __init__(
        self, calls: list[ToolCall], deliver: Callable[[ToolCall, ToolResult], None]
    ) -> None:
        self._calls = list(calls)
        self._deliver = deliver
        self.statuses: dict[str, Status] = {}

    def has(self, call_id: str) -> bool:
        """True once the call has its result."""
        return call_id in self.statuses

    def record(self, call: ToolCall, result: ToolResult) -> bool:
        """Deliver the call's result; False (nothing delivered) if it already has one."""
        if call.id in self.statuses:
            log.warning("call %s already has its result; a second one was dropped", call.id)
            return False
        self.statuses[call.id] = result.status
        self._deliver(call, result)
        return True

    def answer_rest(self, result_for: Callable[[ToolCall], ToolResult]) -> None:
        """Give each call still without one `result_for(call)`; synchronous, so safe in a cancel."""
        for call in self._calls:
            if call.id not in self.statuses:
                self.record(call, result_for(call))


# Calling tool code


class CodeCaller:
    """Calls one batch's tool code for the orchestrator."""

    def __init__(self, context: CallContext) -> None:
        self.context = context

    def tools_for(self, run: CallRun) -> CallTools:
        """The `tools` (or `meta`) this call's code receives: the system plus the call's output."""
        return CallTools(self.context, run)

    async def output(self, run: CallRun, kind: str, *data: Any) -> None:
        """Call `output.<kind>` in the form it is written in (see model/tool.py).

        `data` is `(stdout,)` for success and `(stderr, stdout)` for error. A failure is logged
        and, for success, said in the call's result in one line.
        """
        tool = run.tool
        fn = tool.output.get(kind) if tool is not None else None
        if tool is None or fn is None:
            return
        cmd = run.execution.cmd
        if cmd is None and tool.cmds:  # rejected or cancelled: what would have run
            cmd = tool.cmds[0]
        meta = self.tools_for(run).with_cmd(cmd)
        form = output_form(fn, kind)
        if form == "tools":
            arguments: tuple[Any, ...] = (meta, cmd, *data)
        elif form == "cmd":
            arguments = (cmd, *data)
        else:
            arguments = (*data[:1], meta)
        ok, _, error = await self.call(run, fn, kind, *arguments, plain=True)
        if not ok and kind == "success":
            run.output_failed = True
            run.buffer.add(f"The {run.call.name} tool ran, but its success output failed: {error}")

    async def output_prompt(self, run: CallRun) -> None:
        """An older tool's `output_prompt(output)`: its text is what the model is sent."""
        tool = run.tool
        fn = tool.output.get("output_prompt") if tool is not None else None
        if fn is None:
            return
        execution = run.execution
        lines = _lines(execution.stdout if execution.status == "success" else execution.stderr)
        ok, value, _ = await self.call(run, fn, "output_prompt", lines, bare=True)
        if ok and value is not None:
            run.buffer.add(value)

    async def handler(self, run: CallRun, kind: str) -> bool:
        """Call `handlers.<kind>(self, tools)`; False (with an error piece) when it fails."""
        fn = run.tool.handlers.get(kind) if run.tool is not None else None
        if fn is None:
            return True
        ok, _, error = await self.call(run, fn, kind)
        if not ok:
            run.execution.stderr = [f"The {run.call.name} tool's {kind} step failed: {error}"]
        return ok

    async def call(
        self,
        run: CallRun,
        fn: Callable[..., Any],
        kind: str,
        *args: Any,
        plain: bool = False,
        bare: bool = False,
    ) -> tuple[bool, Any, str]:
        """Call tool code: (finished, value, the failure in one line).

        Unless `plain`, the arguments are `(self, tools)` (tools is also `meta`); `plain`
        callers give every argument after `self` themselves, `bare` ones every argument
        (older callbacks such as `output_prompt(output)` take no `self`).
        """
        tool = run.tool
        assert tool is not None
        arguments = args if plain or bare else (self.tools_for(run), *args)
        if not bare:
            arguments = (tool, *arguments)
        try:
            # A plain function runs here and now (no time limit can stop it anyway); only an
            # awaitable it returns needs a task under the limit.
            value = call_fn(fn, *arguments)
            finished = True
            if inspect.isawaitable(value):
                finished, value = await bounded(value, self.timeout(tool))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("%s: %s failed", run.call.name, kind)
            return False, None, one_line_error(exc)
        if not finished:
            log.error("%s: %s timed out", run.call.name, kind)
            return False, None, f"timed out after {self.timeout(tool):g}s"
        return finished, value, ""

    async def override_cmds(self, run: CallRun) -> bool:
        """An older tool's `override_cmds(cmds)`: the cmds it returns are the ones that run."""
        tool = run.tool
        fn = tool.handlers.get("override_cmds") if tool is not None else None
        if tool is None or fn is None:
            return True
        ok, value, _ = await self.call(run, fn, "override_cmds", list(tool.cmds), bare=True)
        if ok and isinstance(value, (list, tuple)):
            tool.cmds = list(value)
        return ok

    async def decision(self, run: CallRun, decide: Callable[..., Any]) -> bool:
        """An older tool's `handlers.approved(self)`: True runs the cmds, False rejects."""
        ok, value, error = await self.call(run, decide, "approved")
        if not ok:
            run.reason = f"its approval step failed: {error}"
        return ok and bool(value)

    def timeout(self, tool: Tool) -> float | None:
        """Seconds: the tool's `opts.timeout` (milliseconds), else the chat's default."""
        default = self.context.opts["timeout"]
        return timeout_seconds(tool.opts, None if default is None else float(default))


def one_line_error(exc: BaseException) -> str:
    """An exception from tool code in one line: `Type: message` (first line only)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _lines(values: list[Any]) -> list[str]:
    """Several cmds' output as one list of lines (a command's output is a list already)."""
    lines: list[str] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            lines.extend(str(item) for item in value)
        elif value is not None:
            lines.extend(str(value).splitlines())
    return lines


class CallTools:
    """The tool system as one call's callbacks see it (`tools`, or `meta` with `meta.tools`).

    Attributes of the tool system read through (`chat`, `cwd`, `confirm`, ...); `stdout` and
    `stderr` hold what this call's cmds produced so far; `cmd` is the cmd the callback is
    about; `meta["tools"]` and `meta.tools` are this object again, so both readings work.
    """

    def __init__(self, system: Any, run: Any) -> None:
        self.__dict__["_system"] = system
        self.__dict__["_run"] = run
        self.__dict__["cmd"] = None

    @property
    def stdout(self) -> list[Any]:
        """What this call's cmds gave so far, one entry per cmd (a command's is a list of lines)."""
        return list(self._run.execution.stdout)

    @property
    def stderr(self) -> list[Any]:
        """What the failing cmd of this call gave."""
        return list(self._run.execution.stderr)

    @property
    def tools(self) -> CallTools:
        """The tool system: `meta.tools` in today's CodeCompanion form."""
        return self

    @property
    def system(self) -> Any:
        """The chat's tool system itself."""
        return self._system

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_system"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "cmd":
            self.__dict__[name] = value
        else:
            setattr(self._system, name, value)

    def __getitem__(self, key: str) -> Any:
        if key in _META_KEYS:
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in _META_KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(_META_KEYS)

    def get(self, key: str, default: Any = None) -> Any:
        """`meta.get("tools")`, as a table read in Lua would."""
        return getattr(self, key) if key in _META_KEYS else default

    def with_cmd(self, cmd: Any) -> CallTools:
        """This object with `cmd` set (the cmd an output is about)."""
        self.__dict__["cmd"] = cmd
        return self


class CmdOpts(dict[str, Any]):
    """A function cmd's third argument: the previous `{status, data}` and `{input, output_cb}`.

    Keys `status`/`data` are the previous function's result (the `input` reading); keys and
    attributes `input` and `output_cb` are today's `opts` reading. Before the first function
    there is no previous result: only `input` (None) and `output_cb`.
    """

    def __init__(self, previous: dict[str, Any] | None, output_cb: Callable[..., Any]) -> None:
        super().__init__(previous or {})
        self["input"] = previous
        self["output_cb"] = output_cb
        self.input = previous
        self.output_cb = output_cb
        self.output_handler = output_cb


# Running cmds


async def bounded(awaitable: Awaitable[Any], timeout: float | None) -> tuple[bool, Any]:
    """Run `awaitable` with a deadline: (True, value), or (False, None) when time ran out.

    Unlike `asyncio.wait_for` this tells our deadline apart from a TimeoutError the tool raises.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE)
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE)
        return False, None
    return True, task.result()


def normalize(value: Any) -> CmdOutput:
    """A cmd's return value as a result: CodeCompanion's `{status, data}` dicts, else data."""
    if isinstance(value, CmdOutput):
        return value
    if isinstance(value, dict) and "status" in value:
        status: CmdStatus = "error" if value.get("status") == "error" else "success"
        return CmdOutput(status, value.get("data", value.get("msg")))
    return CmdOutput("success", value)


def failure(exc: BaseException, name: str) -> CmdOutput:
    """An exception from tool code as an error result (tracebacks go to the log only)."""
    if isinstance(exc, ToolError):
        return CmdOutput("error", str(exc))
    log.error("tool %s raised", name, exc_info=exc)
    return CmdOutput("error", raised_text(exc))


# Raised to say something (as Lua's `error("...")`): their message is the whole text.
_PLAIN = (Exception, RuntimeError)


def raised_text(exc: BaseException) -> str:
    """What the tool raised: the message of a plain `Exception`/`RuntimeError`, else the type
    too, where it tells what went wrong (`KeyError: 'x'`, `ZeroDivisionError: ...`)."""
    message = str(exc)
    if not message:
        return type(exc).__name__
    return message if type(exc) in _PLAIN else f"{type(exc).__name__}: {message}"


async def run_function(
    fn: Callable[..., Any], tool: Tool, input: Any, timeout: float | None
) -> CmdOutput:
    """One function cmd; its result is what it returns or passes to `output_handler` first."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    reported: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any) -> None:
        if reported.done():
            log.warning("%s: output_handler called again; the later result is ignored", tool.name)
            return
        reported.set_result(result)

    def output_handler(result: Any = None) -> None:
        if threading.get_ident() == loop_thread:
            settle(result)
            return
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result)

    form = cmd_form(fn)

    async def body() -> Any:
        value = fn(*_cmd_arguments(form, tool, input, output_handler))
        if inspect.isawaitable(value):
            value = await value
        # A function that cannot report through a callback has finished when it returns;
        # today's `(self, args, opts)` form returns nothing when it reports through output_cb.
        if (value is not None or form not in ("handler", "opts")) and not reported.done():
            reported.set_result(value)
        return await reported

    try:
        finished, value = await bounded(body(), timeout)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return failure(exc, tool.name)
    if not finished:
        # Cancelling the body cancels the future it waited on: cancelled means never reported.
        hint = " and never reported a result" if reported.cancelled() else ""
        return CmdOutput("timeout", f"The {tool.name} tool timed out after {timeout:g}s{hint}.")
    return normalize(value)


def _cmd_arguments(
    form: str, tool: Tool, previous: dict[str, Any] | None, output_handler: Callable[..., Any]
) -> tuple[Any, ...]:
    """The arguments for a function cmd in `form` (see model/tool.py)."""
    if form == "handler":
        return (tool, tool.args, previous, output_handler)
    if form in ("opts", "either"):
        return (tool, tool.args, CmdOpts(previous, output_handler))
    if form == "input":
        return (tool, tool.args, previous)
    if form == "previous":  # the oldest form: the previous function's output itself
        return (tool, None if previous is None else previous.get("data"))
    if form == "args":
        return (tool, tool.args)
    return (tool,)


def expand(cmd: Any, env: dict[str, Any]) -> list[str]:
    """A command's argv with `${name}` replaced from `env` (unknown names stay as written)."""
    if isinstance(cmd, dict):
        cmd = cmd.get("cmd", [])
    parts = shlex.split(cmd) if isinstance(cmd, str) else [str(part) for part in cmd]

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in env:
            log.warning("no env value for ${%s}; left as written", key)
            return match.group(0)
        return str(env[key])

    return [_PLACEHOLDER.sub(value, part) for part in parts]


async def run_command(
    argv: list[str],
    name: str,
    cwd: Path,
    timeout: float | None,
    max_output: int,
    env: dict[str, str] | None = None,
    sandbox: CommandSandbox | None = None,
) -> CmdOutput:
    """One command cmd: exit 0 gives stdout as data; otherwise stderr and stdout are the error.

    `env` is the process's environment (None: the default cleaned one, see child_env); with
    an active `sandbox` the command runs confined to it.
    """
    from .process import run_process  # only command tools need the process machinery

    try:
        launch = None if sandbox is None else sandbox.launch(cwd)
    except ToolError as exc:
        return CmdOutput("error", str(exc))
    finished, result = await bounded(
        run_process(argv, cwd=cwd, timeout=timeout, max_output=max_output, env=env, sandbox=launch),
        None if timeout is None else timeout + _CANCEL_GRACE,
    )
    if not finished:
        return CmdOutput("timeout", f"`{shlex.join(argv)}` did not stop after {timeout:g}s.")
    note = "\n[output beyond the size limit was dropped]" if result.truncated else ""
    if result.timed_out:
        text = f"`{shlex.join(argv)}` timed out after {timeout:g}s and was killed."
        so_far = "\n".join(s for s in (result.stdout, result.stderr) if s.strip())
        if so_far:
            text += f"\nOutput so far:\n{so_far}"
        return CmdOutput("timeout", text + note)
    if result.exit_code == 0:
        # CodeCompanion gives a command's output as a list of lines (`stdout[0][0]` is the
        # first line of the first command).
        lines = result.stdout.splitlines()
        return CmdOutput("success", lines + [note.strip()] if note else lines)
    code = "could not start" if result.exit_code is None else f"exit code {result.exit_code}"
    text = f"`{shlex.join(argv)}` failed ({code})"
    for label, stream in (("stderr", result.stderr), ("stdout", result.stdout)):
        if stream.strip():
            text += f"\n{label}:\n{stream.rstrip()}"
    return CmdOutput("error", text + note)


def set_flag(tool: Tool, cmd: Any, succeeded: bool) -> None:
    """A command with a `flag` records whether it succeeded in `tools.chat.tool_registry.flags`
    (CodeCompanion's place for it)."""
    flag = cmd.get("flag") if isinstance(cmd, dict) else None
    flags = getattr(tool.tools, "flags", None)
    if isinstance(flag, str) and isinstance(flags, dict):
        flags[flag] = succeeded


async def _command_cmd(
    tool: Tool, argv: list[str], cwd: Path, timeout: float | None, max_output: int
) -> CmdOutput:
    """One command cmd, in the chat's sandbox unless the tool opts out; a repository it made
    is asked about (see sandbox/aftermath.py) and noted in its output."""
    box = sandbox_of(tool.tools) if tool.opts.get("sandbox") is not False else None
    env = tool_environment(tool.tools)
    result = await run_command(argv, tool.name, cwd, timeout, max_output, env, box)
    made = await settle(box, cwd, tool.tools.confirm)
    if not made:
        return result
    data = result.data
    return replace(result, data=[*data, made] if isinstance(data, list) else f"{data}\n{made}")


async def run_cmds(
    tool: Tool,
    *,
    cwd: Path,
    timeout: float | None,
    max_output: int,
    on_success: Callable[[list[Any]], Awaitable[None]],
    execution: CallOutput | None = None,
) -> CallOutput:
    """Run `tool.cmds` in order (read live, so setup may set them); an error stops the rest.

    An older tool's `pre_cmd(env, args)` runs once, before the first cmd.
    """
    execution = CallOutput() if execution is None else execution
    previous: dict[str, Any] | None = None
    env: dict[str, Any] | None = None
    pre_cmd = tool.handlers.get("pre_cmd")
    index = 0
    while index < len(tool.cmds):
        cmd = tool.cmds[index]
        index += 1
        try:
            if env is None and (pre_cmd is not None or not callable(cmd)):
                env = dict(await invoke(tool.env, tool) or {}) if tool.env else {}
                if pre_cmd is not None:
                    await invoke(pre_cmd, env, tool.args)
        except Exception as exc:
            result = failure(exc, tool.name)
            execution.status, execution.stderr = result.status, [result.data]
            return execution
        if callable(cmd):
            execution.cmd = getattr(cmd, "__codecompanion_function__", cmd)
            result = await run_function(cmd, tool, previous, timeout)
        else:
            argv = execution.cmd = expand(cmd, env or {})
            result = await _command_cmd(tool, argv, cwd, timeout, max_output)
            set_flag(tool, cmd, result.status == "success")
        if result.status != "success":
            execution.status, execution.stderr = result.status, [result.data]
            return execution
        execution.stdout.append(result.data)
        previous = result.as_input()
        await on_success(list(execution.stdout))
    return execution
