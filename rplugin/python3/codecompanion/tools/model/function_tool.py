"""A native tool (how every builtin is written): `async run(ctx, args) -> FunctionOutput`, and an
optional `prompt(ctx, args)` for its approval question. A failure is raised: a `ToolError` (or a
`Failure` with its own line for the user, or `TimedOut`); the call's answer is made from it here
and becomes the call's ToolResult in the orchestrator."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import ToolError
from ...messages import Status
from .contract import Invocation, Reply, ToolContext, ToolSpec, bounded, raised_text

log = logging.getLogger("codecompanion.tools")

_USER_WIDTH = 120


@dataclass(frozen=True)
class FunctionOutput:
    """A tool's answer: structured text for the model, one short line for the user, and data."""

    for_llm: str
    for_user: str | None  # None: the user is shown what the model gets
    data: dict[str, Any] = field(default_factory=dict)


class Failure(ToolError):
    """A ToolError that also carries its own short line for the user."""

    status: Status = "error"

    def __init__(self, for_llm: str, for_user: str | None) -> None:
        super().__init__(for_llm)
        self.for_user = for_user


class TimedOut(Failure):
    """The tool's work ran out of time (its answer is a `timeout`, like any other)."""

    status: Status = "timeout"


# The JSON object the model sent, checked against the schema.
Args = dict[str, Any]
Run = Callable[[ToolContext, Args], Awaitable[FunctionOutput]]
Prompt = Callable[[ToolContext, Args], str]


@dataclass(kw_only=True)
class NativeTool(ToolSpec):
    """A tool written against the contract: `run` does the work, `prompt` words its question."""

    run: Run
    prompt: Prompt | None = None

    def start(self, ctx: ToolContext, args: Args, entry: Mapping[str, Any]) -> NativeCall:
        """One call of the tool."""
        return NativeCall(self, ctx, args, entry)


class NativeCall(Invocation):
    """One call of a native tool: its `run` under the call's time limit, its failures as
    answers."""

    spec: NativeTool

    def __init__(self, spec: NativeTool, ctx: ToolContext, args: Args, entry: Mapping[str, Any]):
        super().__init__(spec, ctx, args, entry)
        self.output: FunctionOutput | None = None

    async def prompt(self) -> str | None:
        """The tool's own question, when it words one."""
        ask = self.spec.prompt
        return None if ask is None else ask(self.ctx, self.args)

    async def run(self) -> Reply:
        """The tool's answer: its output, or what it raised, or the time limit's end."""
        name, limit = self.spec.name, self.ctx.timeout
        try:
            finished, output = await bounded(self.spec.run(self.ctx, self.args), limit)
        except Failure as exc:
            return Reply(exc.status, str(exc), exc.for_user)
        except ToolError as exc:
            return failed(name, str(exc))
        except OSError as exc:
            return failed(name, f"{exc.strerror or exc} ({exc.filename or ''})")
        except Exception as exc:
            log.error("tool %s raised", name, exc_info=exc)
            return failed(name, raised_text(exc))
        if not finished:
            said = f"timed out after {limit:g}s"
            return Reply("timeout", f"The {name} tool {said}.", f"{name}: {said}", said)
        self.output = output
        return Reply("success", output.for_llm, output.for_user)


def failed(name: str, message: str) -> Reply:
    """An error answer saying `message`, with its first line for the user."""
    return Reply("error", f"{name} failed: {message}", f"{name}: {one_line(message)}")


def timed_out(name: str, message: str) -> TimedOut:
    """The tool's own time limit ran out: said as an error is (`failed`), answered `timeout`."""
    return TimedOut(f"{name} failed: {message}", f"{name}: {one_line(message)}")


def one_line(text: str, width: int = _USER_WIDTH) -> str:
    """The first line of `text`, cut to `width` characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= width else first[: width - 1] + "…"


def nullable(kind: str, description: str, **extra: Any) -> dict[str, Any]:
    """A property the model may set to null (strict schemas require every property)."""
    return {"type": [kind, "null"], "description": description, **extra}


def strict_schema(name: str, description: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema in strict form: every property required, no others allowed."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": dict(properties),
                "required": list(properties),
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def function_tool(
    name: str,
    description: str,
    properties: Mapping[str, Any],
    run: Run,
    *,
    prompt: Prompt | None = None,
    opts: Mapping[str, Any] | None = None,
) -> NativeTool:
    """A native tool with a strict schema of `properties`."""
    return NativeTool(
        name=name,
        schema=strict_schema(name, description, properties),
        opts=dict(opts or {}),
        run=run,
        prompt=prompt,
    )


def timeout_seconds(opts: Mapping[str, Any], default: float | None) -> float | None:
    """A tool's `opts["timeout"]`, given in milliseconds as in CodeCompanion, in seconds.

    `default` (seconds) when the tool sets none; an explicit None means no limit.
    """
    if "timeout" not in opts:
        return default
    value = opts["timeout"]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return default
    return float(value) / 1000.0


def time_limits(opts: Mapping[str, Any], default: float) -> tuple[float, float]:
    """(limit, own) in seconds: the call's limit and a slightly shorter one for the work.

    The limit is `opts["timeout"]` (milliseconds) or `default` (seconds). The tool system
    cancels a call at that limit; finishing the work a little earlier lets the tool still
    report what it got (a command's output so far, say). The margin is at least half a
    second for short limits: killing a process group and sweeping what it left can take a
    tenth of a second on a loaded machine, and the tool system's cancel must not win that race.
    """
    limit = timeout_seconds(opts, default) or default
    margin = max(min(2.0, limit * 0.1), min(0.5, limit * 0.5))
    return limit, limit - margin
