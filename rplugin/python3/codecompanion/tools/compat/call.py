"""One call of a CodeCompanion-shaped Tool: the `self` its callbacks receive, and its steps
(setup → the tool's approval hooks → cmds and outputs → on_exit) as an Invocation.

Each callback is called in the form it is written in (forms.py), under the call's time limit;
what the callbacks add with `add_tool_output` becomes the call's answer, else a default text.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ...messages import Status
from ...outside import UserValue
from ..model.calling import as_text, invoke
from ..model.calling import call as call_fn
from ..model.contract import Invocation, Reply, ToolContext, ToolSpec, bounded, default_output
from .cmds import CallOutput, Cmd, run_cmds
from .forms import output_form, takes_config
from .meta import Meta, Pieces

log = logging.getLogger("codecompanion.tools")


class Table(Protocol):
    """A tool's CodeCompanion fields, as the Tool (table.py) holds them."""

    cmds: list[Cmd]
    env: Callable[..., dict[str, Any]] | None
    handlers: dict[str, Callable[..., Any]]
    output: dict[str, Callable[..., Any]]


class TableCall(Invocation):
    """`self` in a CodeCompanion tool's callbacks: `self.args`, `self.name`, `self.opts`,
    `self.cmds` (setup may set them), `self.tool`/`self.entry` (the config entry),
    `self.function_call`, `self.state` and `self.tools`."""

    def __init__(
        self,
        spec: ToolSpec,
        ctx: ToolContext,
        args: dict[str, Any],
        entry: Mapping[str, Any],
        table: Table,
    ) -> None:
        self.state: dict[str, Any] = {}
        super().__init__(spec, ctx, copy.deepcopy(args), entry)
        self.state = {}
        self.table = table
        self.cmds: list[Cmd] = list(table.cmds)
        self.pieces = Pieces(ctx.call.id)
        self.execution = CallOutput()
        self.reason: str | None = None
        self.output_failed = False
        self.tools = Meta(ctx, self.execution, self.pieces)

    # What the callbacks read

    @property
    def approved(self) -> bool:
        """True once the user (or YOLO, or a rule) approved the call."""
        return bool(self.state.get("approved"))

    @approved.setter
    def approved(self, value: bool) -> None:
        self.state["approved"] = value

    @property
    def schema(self) -> dict[str, Any]:
        """The tool's schema."""
        return self.spec.schema

    @property
    def system_prompt(self) -> str | Callable[[dict[str, Any]], str] | None:
        """The tool's system prompt."""
        return self.spec.system_prompt

    @property
    def env(self) -> Callable[..., dict[str, Any]] | None:
        """The tool's `env` function (values for `${name}` in its commands)."""
        return self.table.env

    @property
    def handlers(self) -> dict[str, Callable[..., Any]]:
        """The tool's handlers."""
        return self.table.handlers

    @property
    def output(self) -> dict[str, Callable[..., Any]]:
        """The tool's output callbacks."""
        return self.table.output

    @property
    def tool(self) -> dict[str, Any]:
        """The config entry: CodeCompanion's name for `entry`, kept for tools written for it."""
        return self.entry

    @property
    def function_call(self) -> dict[str, Any]:
        """The call as the model sent it: `id`, `name`, the raw `arguments` text, and the
        stored `{id, type, function = {name, arguments}}` shape around them."""
        stored = self.call.to_dict()
        return {**stored, "name": self.call.name, "arguments": self.call.arguments_json()}

    @property
    def request(self) -> dict[str, Any]:
        """The parsed call, as older tools name it: `function_call`."""
        return self.function_call

    @property
    def description(self) -> str:
        """The schema's description."""
        return self.spec.description

    @property
    def function(self) -> dict[str, Any]:
        """The `function` object of the schema."""
        return self.spec.function

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.spec.parameters

    @property
    def runs_commands(self) -> bool:
        """Commands among its cmds (or `sandboxed`): the sandbox and its modes apply."""
        if self.opts.get("sandbox") is False:
            return False
        return self.opts.get("sandboxed") is True or any(not callable(cmd) for cmd in self.cmds)

    # The steps

    async def setup(self) -> Reply | None:
        """`handlers.setup`, then an older tool's `override_cmds`."""
        if await self._handler("setup") and await self._override_cmds():
            return None
        return self.finish("error")

    @property
    def own_approval(self) -> Callable[[], Awaitable[bool]] | None:
        """An older tool's `handlers.approved(self)`: True runs the cmds, False rejects."""
        return self._decide if "approved" in self.handlers else None

    async def _decide(self) -> bool:
        ok, value, error = await self._code(self.handlers["approved"], "approved", self.tools)
        if not ok:
            self.reason = f"its approval step failed: {error}"
        return ok and bool(value)

    async def prompt(self) -> str | None:
        """`output.prompt`: the approval question (None: the default one)."""
        build = self.output.get("prompt")
        if build is None:
            return None
        try:
            text = as_text(await invoke(build, self, self.tools))
        except Exception:
            log.exception("%s: output.prompt failed; using the default question", self.name)
            return None
        return text if text.strip() else None

    async def needs_asking(self) -> bool:
        """`requires_approval` (a bool or `fn(self, tools)`), then `prompt_condition`."""
        opts = self.opts
        value = opts.get("requires_approval", opts.get("require_approval_before", False))
        if callable(value):
            value = await invoke(value, self, self.tools)
        if not value:
            return False
        condition = self.handlers.get("prompt_condition")
        if condition is None:
            return True
        # (self, tools, config): config is the tool's config entry; (self, meta) reads either way.
        extra = (self.entry,) if takes_config(condition) else ()
        return bool(await invoke(condition, self, self.tools, *extra))

    async def run(self) -> Reply:
        """The cmds, `output.success` after each, then `output_prompt` and `output.error`."""

        async def on_success(stdout: list[Any]) -> None:
            await self._output("success", stdout)

        execution = await run_cmds(self, on_success)
        await self._output_prompt()
        if execution.status == "success":
            return self.finish("error" if self.output_failed else "success")
        await self._output("error", execution.stderr, execution.stdout)
        limit = self.ctx.timeout
        timed_out = execution.status == "timeout" and limit is not None
        return self.finish(execution.status, f"timed out after {limit:g}s" if timed_out else "")

    async def rejected(self, reason: str | None) -> Reply:
        """`output.rejected`; the user's reason reaches the model whatever it added."""
        self.reason = reason
        await self._output("rejected")
        items = self.pieces.items
        if reason and items and not any(reason in text for text, _ in items):
            self.pieces.add(f'The user gave this reason: "{reason}"')
        return self.finish("rejected")

    async def cancelled(self) -> Reply:
        """`output.cancelled`."""
        await self._output("cancelled")
        return self.finish("cancelled")

    async def exit(self) -> None:
        """`handlers.on_exit`."""
        await self._handler("on_exit")

    def edited(self, args: dict[str, Any]) -> None:
        """The edited arguments, and the cmds as configured (setup runs again)."""
        self.args, self.cmds = args, list(self.table.cmds)

    def interrupted(self, status: Status) -> Reply:
        """What the callbacks added before the step was cut short, else the default."""
        return self.finish(status)

    def finish(self, status: Status, detail: str = "") -> Reply:
        """The call's answer: what the callbacks added, or the default text."""
        execution = self.execution
        errors = execution.stderr or ([detail] if detail else [])
        default = default_output(status, self.name, execution.stdout, errors, self.reason)
        for_llm, for_user = self.pieces.texts(default)
        return Reply(status, for_llm, for_user, detail)

    # Calling the callbacks

    async def _output(self, kind: str, *data: list[UserValue]) -> None:
        """Call `output.<kind>` in the form it is written in (see forms.py).

        `data` is `(stdout,)` for success and `(stderr, stdout)` for error. A failure is logged
        and, for success, said in the call's answer in one line.
        """
        fn = self.output.get(kind)
        if fn is None:
            return
        cmd = self.execution.cmd
        if cmd is None and self.cmds:  # rejected or cancelled: what would have run
            cmd = self.cmds[0]
        meta = self.tools.with_cmd(cmd)
        form = output_form(fn, kind)
        if form == "tools":
            arguments: tuple[Any, ...] = (meta, cmd, *data)
        elif form == "cmd":
            arguments = (cmd, *data)
        else:
            arguments = (*data[:1], meta)
        ok, _, error = await self._code(fn, kind, *arguments)
        if not ok and kind == "success":
            self.output_failed = True
            self.pieces.add(f"The {self.name} tool ran, but its success output failed: {error}")

    async def _output_prompt(self) -> None:
        """An older tool's `output_prompt(output)`: its text is what the model is sent."""
        fn = self.output.get("output_prompt")
        if fn is None:
            return
        execution = self.execution
        lines = _lines(execution.stdout if execution.status == "success" else execution.stderr)
        ok, value, _ = await self._code(fn, "output_prompt", lines, bare=True)
        if ok and value is not None:
            self.pieces.add(value)

    async def _handler(self, kind: str) -> bool:
        """Call `handlers.<kind>(self, tools)`; False (with the failure noted) when it fails."""
        fn = self.handlers.get(kind)
        if fn is None:
            return True
        ok, _, error = await self._code(fn, kind, self.tools)
        if not ok:
            self.execution.stderr = [f"The {self.name} tool's {kind} step failed: {error}"]
        return ok

    async def _override_cmds(self) -> bool:
        """An older tool's `override_cmds(cmds)`: the cmds it returns are the ones that run."""
        fn = self.handlers.get("override_cmds")
        if fn is None:
            return True
        ok, value, _ = await self._code(fn, "override_cmds", list(self.cmds), bare=True)
        if ok and isinstance(value, (list, tuple)):
            self.cmds = list(value)
        return ok

    async def _code(
        self, fn: Callable[..., Any], kind: str, *args: Any, bare: bool = False
    ) -> tuple[bool, Any, str]:
        """Call tool code with `self` and `args` (`bare`: `args` only, for older callbacks such
        as `output_prompt(output)`): (finished, value, the failure in one line)."""
        arguments = args if bare else (self, *args)
        limit = self.ctx.timeout
        try:
            # A plain function runs here and now (no time limit can stop it anyway); only an
            # awaitable it returns needs a task under the limit.
            value = call_fn(fn, *arguments)
            finished = True
            if inspect.isawaitable(value):
                finished, value = await bounded(value, limit)
        except Exception as exc:
            log.exception("%s: %s failed", self.name, kind)
            return False, None, one_line_error(exc)
        if not finished:
            log.error("%s: %s timed out", self.name, kind)
            return False, None, f"timed out after {limit:g}s"
        return finished, value, ""


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
