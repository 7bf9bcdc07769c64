"""The shape every builtin shares: one async run function, a reply for the model and the user."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import ToolError
from .tool import Tool

_USER_WIDTH = 120


@dataclass(frozen=True)
class FunctionOutput:
    """A tool's answer: structured text for the model, one short line for the user, and data."""

    for_llm: str
    for_user: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_data(self) -> dict[str, Any]:
        """The cmd's `data`: the domain fields plus both texts."""
        return {**self.data, "for_llm": self.for_llm, "for_user": self.for_user}


class Failure(ToolError):
    """A ToolError that also carries its own short line for the user."""

    def __init__(self, for_llm: str, for_user: str) -> None:
        super().__init__(for_llm)
        self.for_user = for_user


Run = Callable[[Tool, dict[str, Any]], Awaitable[FunctionOutput]]
Text = Callable[[Tool], str]


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


def _error_texts(name: str, item: Any) -> tuple[str, str]:
    if isinstance(item, dict) and "for_llm" in item:
        return str(item["for_llm"]), str(item.get("for_user") or one_line(str(item["for_llm"])))
    message = str(item) if item is not None else "failed"
    return f"{name} failed: {message}", f"{name}: {one_line(message)}"


def function_tool(
    name: str,
    description: str,
    properties: Mapping[str, Any],
    run: Run,
    *,
    prompt: Text | None = None,
    opts: Mapping[str, Any] | None = None,
) -> Tool:
    """A Tool whose one cmd awaits `run` and whose outputs add its reply to the chat."""

    async def cmd(self: Tool, args: dict[str, Any], *_: Any) -> dict[str, Any]:
        try:
            reply = await run(self, args if isinstance(args, dict) else {})
        except Failure as exc:
            return {"status": "error", "data": {"for_llm": str(exc), "for_user": exc.for_user}}
        except ToolError as exc:
            return {"status": "error", "data": str(exc)}
        except OSError as exc:
            return {"status": "error", "data": f"{exc.strerror or exc} ({exc.filename or ''})"}
        return {"status": "success", "data": reply.as_data()}

    def success(self: Tool, tools: Any, _cmd: Any, stdout: list[Any]) -> None:
        data = stdout[-1] if stdout else {}
        if not isinstance(data, dict) or "for_llm" not in data:
            data = {"for_llm": str(data), "for_user": f"{name} done"}
        tools.chat.add_tool_output(self, data["for_llm"], data.get("for_user"))

    def error(self: Tool, tools: Any, _cmd: Any, stderr: list[Any], _stdout: Any = None) -> None:
        for_llm, for_user = _error_texts(name, stderr[-1] if stderr else None)
        tools.chat.add_tool_output(self, for_llm, for_user)

    output: dict[str, Callable[..., Any]] = {"success": success, "error": error}
    if prompt is not None:
        ask = prompt
        output["prompt"] = lambda self, _tools=None: ask(self)
    return Tool(
        name=name,
        cmds=[cmd],
        schema=strict_schema(name, description, properties),
        opts=dict(opts or {}),
        output=output,
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


def arg_text(args: Mapping[str, Any], key: str) -> str:
    """A required string argument; ToolError when it is missing or of the wrong type."""
    value = args.get(key)
    if not isinstance(value, str):
        got = "missing" if value is None else f"a {type(value).__name__}"
        raise ToolError(f"`{key}` must be a string (got {got}).")
    return value


def arg_opt_text(args: Mapping[str, Any], key: str) -> str | None:
    """An optional string argument: None when null or missing."""
    return None if args.get(key) is None else arg_text(args, key)


def arg_int(args: Mapping[str, Any], key: str, default: int | None = None) -> int:
    """An integer argument (a whole float such as 3.0 is accepted); null gives `default`."""
    value = args.get(key)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        got = "missing" if value is None else repr(value)
        raise ToolError(f"`{key}` must be an integer (got {got}).")
    if isinstance(value, float) and not value.is_integer():
        raise ToolError(f"`{key}` must be a whole number (got {value}).")
    return int(value)


def arg_bool(args: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean argument; null gives `default`."""
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolError(f"`{key}` must be true, false or null (got {value!r}).")
    return value
