"""Calling tool code: handlers, outputs and older callbacks, each in the form it is written in.

The orchestrator decides when; this module decides how: which arguments a callback gets
(model/forms.py reads its signature), under which time limit, and what its failure says.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

from ..model.forms import output_form
from ..model.function_tool import timeout_seconds
from ..model.tool import Tool
from .batch import CallContext
from .call_run import CallRun
from .meta import CallTools
from .runner import bounded, call

log = logging.getLogger("codecompanion.tools")


class ToolCode:
    """Calls one batch's tool code for the orchestrator."""

    def __init__(self, context: CallContext) -> None:
        self.context = context

    def tools_for(self, run: CallRun) -> CallTools:
        """The `tools` (or `meta`) this call's code receives: the system plus the call's output."""
        return CallTools(self.context, run)

    async def output(self, run: CallRun, kind: str, *data: Any) -> None:
        """Call `output.<kind>` in the form it is written in (see model/forms.py).

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
            value = call(fn, *arguments)
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
