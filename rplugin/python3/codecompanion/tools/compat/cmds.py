"""Running a CodeCompanion tool's `cmds` in order: functions (sync, async, or reporting through
`output_handler` from any thread) and commands (through the chat's one command runner, with
`${name}` filled from `env`). An error or a timeout stops the rest."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import re
import shlex
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import ToolError
from ..model.calling import invoke
from ..model.contract import CommandRun, CommandStatus, ToolContext, bounded, raised_text
from .forms import cmd_form

log = logging.getLogger("codecompanion.tools")

Command = list[str]
# A function, a command as a list of strings, or `{"cmd": ..., "flag": name}`.
Cmd = Callable[..., Any] | Command

_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")


@dataclass(frozen=True)
class CmdOutput:
    """The outcome of one cmd: `data` is what the next cmd gets as input and outputs receive."""

    status: CommandStatus
    data: Any = None

    def as_input(self) -> dict[str, Any]:
        """CodeCompanion's `{status, data}` shape, passed to the next cmd."""
        return {"status": self.status, "data": self.data}


@dataclass
class CallOutput:
    """All cmds of one call: `stdout` holds each successful cmd's data, `stderr` the failure.

    `cmd` is the cmd that ran last: a command's argv as run, or the function.
    """

    status: CommandStatus = "success"
    stdout: list[Any] = field(default_factory=list)
    stderr: list[Any] = field(default_factory=list)
    cmd: Any = None


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


class Running(Protocol):
    """The call whose cmds run (tools/compat/call.py): passed to its functions as `self`."""

    name: str
    args: dict[str, Any]
    opts: dict[str, Any]
    cmds: list[Cmd]
    ctx: ToolContext
    execution: CallOutput

    @property
    def handlers(self) -> dict[str, Callable[..., Any]]:
        """The tool's handlers (an older tool's `pre_cmd` among them)."""
        ...

    @property
    def env(self) -> Callable[..., dict[str, Any]] | None:
        """The tool's `env` function (values for `${name}` in its commands)."""
        ...


def normalize(value: Any) -> CmdOutput:
    """A cmd's return value as a result: CodeCompanion's `{status, data}` dicts, else data."""
    if isinstance(value, CmdOutput):
        return value
    if isinstance(value, dict) and "status" in value:
        status: CommandStatus = "error" if value.get("status") == "error" else "success"
        return CmdOutput(status, value.get("data", value.get("msg")))
    return CmdOutput("success", value)


def failure(exc: BaseException, name: str) -> CmdOutput:
    """An exception from tool code as an error result (tracebacks go to the log only)."""
    if isinstance(exc, ToolError):
        return CmdOutput("error", str(exc))
    log.error("tool %s raised", name, exc_info=exc)
    return CmdOutput("error", raised_text(exc))


async def run_function(
    fn: Callable[..., Any], call: Running, previous: dict[str, Any] | None
) -> CmdOutput:
    """One function cmd; its result is what it returns or passes to `output_handler` first."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    reported: asyncio.Future[Any] = loop.create_future()
    name, timeout = call.name, call.ctx.timeout

    def settle(result: Any) -> None:
        if reported.done():
            log.warning("%s: output_handler called again; the later result is ignored", name)
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
        value = fn(*_cmd_arguments(form, call, previous, output_handler))
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
        return failure(exc, name)
    if not finished:
        # Cancelling the body cancels the future it waited on: cancelled means never reported.
        hint = " and never reported a result" if reported.cancelled() else ""
        return CmdOutput("timeout", f"The {name} tool timed out after {timeout:g}s{hint}.")
    return normalize(value)


def _cmd_arguments(
    form: str, call: Running, previous: dict[str, Any] | None, output_handler: Callable[..., Any]
) -> tuple[Any, ...]:
    """The arguments for a function cmd in `form` (see forms.py)."""
    if form == "handler":
        return (call, call.args, previous, output_handler)
    if form in ("opts", "either"):
        return (call, call.args, CmdOpts(previous, output_handler))
    if form == "input":
        return (call, call.args, previous)
    if form == "previous":  # the oldest form: the previous function's output itself
        return (call, None if previous is None else previous.get("data"))
    if form == "args":
        return (call, call.args)
    return (call,)


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


def command_output(run: CommandRun, timeout: float | None) -> CmdOutput:
    """A finished command as CodeCompanion gives it: on success its stdout as a list of lines
    (`stdout[0][0]` is the first line of the first command), else a text saying what failed."""
    argv = shlex.join(run.argv)
    note = "\n[output beyond the size limit was dropped]" if run.truncated else ""
    note += f"\n{run.notes}" if run.notes else ""
    if run.status == "success":
        lines = run.stdout.splitlines()
        return CmdOutput("success", lines + note.strip().split("\n") if note else lines)
    if run.status == "timeout":
        text = f"`{argv}` timed out after {timeout:g}s and was killed."
        so_far = "\n".join(s for s in (run.stdout, run.stderr) if s.strip())
        if so_far:
            text += f"\nOutput so far:\n{so_far}"
        return CmdOutput("timeout", text + note)
    code = "could not start" if run.exit_code is None else f"exit code {run.exit_code}"
    text = f"`{argv}` failed ({code})"
    for label, stream in (("stderr", run.stderr), ("stdout", run.stdout)):
        if stream.strip():
            text += f"\n{label}:\n{stream.rstrip()}"
    return CmdOutput("error", text + note)


def set_flag(call: Running, cmd: Any, succeeded: bool) -> None:
    """A command with a `flag` records whether it succeeded in `tools.chat.tool_registry.flags`
    (CodeCompanion's place for it)."""
    flag = cmd.get("flag") if isinstance(cmd, dict) else None
    if isinstance(flag, str):
        call.ctx.chat.flags[flag] = succeeded


async def _command(call: Running, cmd: Any, env: dict[str, Any]) -> CmdOutput:
    """One command cmd through the chat's command runner (its sandbox unless opts say not)."""
    ctx = call.ctx
    argv = call.execution.cmd = expand(cmd, env)
    confined = call.opts.get("sandbox") is not False
    run = await ctx.commands.run(argv, timeout=ctx.timeout, confined=confined)
    result = command_output(run, ctx.timeout)
    set_flag(call, cmd, result.status == "success")
    return result


async def run_cmds(call: Running, on_success: Callable[[list[Any]], Awaitable[None]]) -> CallOutput:
    """Run `call.cmds` in order (read live, so setup may set them); an error stops the rest.

    An older tool's `pre_cmd(env, args)` runs once, before the first cmd.
    """
    execution = call.execution
    previous: dict[str, Any] | None = None
    env: dict[str, Any] | None = None
    pre_cmd = call.handlers.get("pre_cmd")
    index = 0
    while index < len(call.cmds):
        cmd = call.cmds[index]
        index += 1
        try:
            if env is None and (pre_cmd is not None or not callable(cmd)):
                env = dict(await invoke(call.env, call) or {}) if call.env else {}
                if pre_cmd is not None:
                    await invoke(pre_cmd, env, call.args)
        except Exception as exc:
            result = failure(exc, call.name)
            execution.status, execution.stderr = result.status, [result.data]
            return execution
        if callable(cmd):
            execution.cmd = getattr(cmd, "__codecompanion_function__", cmd)
            result = await run_function(cmd, call, previous)
        else:
            result = await _command(call, cmd, env or {})
        if result.status != "success":
            execution.status, execution.stderr = result.status, [result.data]
            return execution
        execution.stdout.append(result.data)
        previous = result.as_input()
        await on_success(list(execution.stdout))
    return execution
