"""Running a tool's cmds in order: functions (sync, async or via output_handler) and commands."""

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
from pathlib import Path
from typing import Any, Literal

from ...errors import ToolError
from ...sandbox.commands import CommandSandbox, sandbox_of
from ..model.forms import cmd_form
from ..model.signature import arity
from ..model.tool import Tool
from .child_env import tool_environment
from .meta import CmdOpts

log = logging.getLogger("codecompanion.tools")

_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
_CANCEL_GRACE = 5.0  # seconds a cancelled cmd gets to clean up (kill its processes)

CmdStatus = Literal["success", "error", "timeout"]


@dataclass(frozen=True)
class CmdResult:
    """The outcome of one cmd: `data` is what the next cmd gets as input and outputs receive."""

    status: CmdStatus
    data: Any = None

    def as_input(self) -> dict[str, Any]:
        """CodeCompanion's `{status, data}` shape, passed to the next cmd."""
        return {"status": self.status, "data": self.data}


@dataclass
class Execution:
    """All cmds of one call: `stdout` holds each successful cmd's data, `stderr` the failure.

    `cmd` is the cmd that ran last: a command's argv as run, or the function.
    """

    status: CmdStatus = "success"
    stdout: list[Any] = field(default_factory=list)
    stderr: list[Any] = field(default_factory=list)
    cmd: Any = None


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts; an awaitable it returns is not awaited."""
    return fn(*args[: arity(fn, len(args))])


async def invoke(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts (CodeCompanion's 3-argument cmds too)."""
    value = call(fn, *args)
    if inspect.isawaitable(value):
        value = await value
    return value


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


def normalize(value: Any) -> CmdResult:
    """A cmd's return value as a result: CodeCompanion's `{status, data}` dicts, else data."""
    if isinstance(value, CmdResult):
        return value
    if isinstance(value, dict) and "status" in value:
        status: CmdStatus = "error" if value.get("status") == "error" else "success"
        return CmdResult(status, value.get("data", value.get("msg")))
    return CmdResult("success", value)


def failure(exc: BaseException, name: str) -> CmdResult:
    """An exception from tool code as an error result (tracebacks go to the log only)."""
    if isinstance(exc, ToolError):
        return CmdResult("error", str(exc))
    log.error("tool %s raised", name, exc_info=exc)
    return CmdResult("error", raised_text(exc))


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
) -> CmdResult:
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
        return CmdResult("timeout", f"The {tool.name} tool timed out after {timeout:g}s{hint}.")
    return normalize(value)


def _cmd_arguments(
    form: str, tool: Tool, previous: dict[str, Any] | None, output_handler: Callable[..., Any]
) -> tuple[Any, ...]:
    """The arguments for a function cmd in `form` (see model/forms.py)."""
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
) -> CmdResult:
    """One command cmd: exit 0 gives stdout as data; otherwise stderr and stdout are the error.

    `env` is the process's environment (None: the default cleaned one, see child_env); with
    an active `sandbox` the command runs confined to it.
    """
    from .process import run_process  # only command tools need the process machinery

    try:
        launch = None if sandbox is None else sandbox.launch(cwd)
    except OSError as exc:
        return CmdResult("error", f"The sandbox could not be prepared ({exc}); nothing ran.")
    finished, result = await bounded(
        run_process(argv, cwd=cwd, timeout=timeout, max_output=max_output, env=env, sandbox=launch),
        None if timeout is None else timeout + _CANCEL_GRACE,
    )
    if not finished:
        return CmdResult("timeout", f"`{shlex.join(argv)}` did not stop after {timeout:g}s.")
    note = "\n[output beyond the size limit was dropped]" if result.truncated else ""
    if result.timed_out:
        text = f"`{shlex.join(argv)}` timed out after {timeout:g}s and was killed."
        so_far = "\n".join(s for s in (result.stdout, result.stderr) if s.strip())
        if so_far:
            text += f"\nOutput so far:\n{so_far}"
        return CmdResult("timeout", text + note)
    if result.exit_code == 0:
        # CodeCompanion gives a command's output as a list of lines (`stdout[0][0]` is the
        # first line of the first command).
        lines = result.stdout.splitlines()
        return CmdResult("success", lines + [note.strip()] if note else lines)
    code = "could not start" if result.exit_code is None else f"exit code {result.exit_code}"
    text = f"`{shlex.join(argv)}` failed ({code})"
    for label, stream in (("stderr", result.stderr), ("stdout", result.stdout)):
        if stream.strip():
            text += f"\n{label}:\n{stream.rstrip()}"
    return CmdResult("error", text + note)


def set_flag(tool: Tool, cmd: Any, succeeded: bool) -> None:
    """A command with a `flag` records whether it succeeded in `tools.chat.tool_registry.flags`
    (CodeCompanion's place for it)."""
    flag = cmd.get("flag") if isinstance(cmd, dict) else None
    flags = getattr(tool.tools, "flags", None)
    if isinstance(flag, str) and isinstance(flags, dict):
        flags[flag] = succeeded


async def run_cmds(
    tool: Tool,
    *,
    cwd: Path,
    timeout: float | None,
    max_output: int,
    on_success: Callable[[list[Any]], Awaitable[None]],
    execution: Execution | None = None,
) -> Execution:
    """Run `tool.cmds` in order (read live, so setup may set them); an error stops the rest.

    An older tool's `pre_cmd(env, args)` runs once, before the first cmd.
    """
    execution = Execution() if execution is None else execution
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
            box = sandbox_of(tool.tools) if tool.opts.get("sandbox") is not False else None
            result = await run_command(
                argv, tool.name, cwd, timeout, max_output, tool_environment(tool.tools), box
            )
            set_flag(tool, cmd, result.status == "success")
        if result.status != "success":
            execution.status, execution.stderr = result.status, [result.data]
            return execution
        execution.stdout.append(result.data)
        previous = result.as_input()
        await on_success(list(execution.stdout))
    return execution
