"""The Tool: CodeCompanion's fields as a dataclass, made from a dict, a Tool or a function; and how
tool code is called, in the form it is written in, with the arguments it takes."""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ...messages import ToolCall
from .legacy import LEGACY_HANDLERS, LEGACY_OUTPUTS, upgrade

Command = list[str]
Cmd = Callable[..., Any] | Command

_FIELDS = ("name", "cmds", "schema", "system_prompt", "opts", "env", "handlers", "output")
_HANDLERS = ("setup", "on_exit", "prompt_condition", *LEGACY_HANDLERS)
_OUTPUTS = ("success", "error", "prompt", "rejected", "cancelled", *LEGACY_OUTPUTS)
# A parameter of a decorated function with this name receives the tool system, not a model value.
TOOLS_PARAMETER = "tools"


@dataclass
class Tool:
    """A tool the model can call.

    At run time the orchestrator works on a copy (`Tool.bind`) carrying `args` (the model's
    arguments), `call` (the ToolCall), `entry` (the config entry, also `tool` as CodeCompanion
    names it) and `tools` (the tool system), so callbacks read `self.args["num1"]`,
    `self.name`, `self.tools.chat`.
    """

    name: str
    cmds: list[Cmd] = field(default_factory=list)
    schema: dict[str, Any] = field(default_factory=dict)
    system_prompt: str | Callable[[dict[str, Any]], str] | None = None
    opts: dict[str, Any] = field(default_factory=dict)
    env: Callable[..., dict[str, Any]] | None = None
    handlers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    output: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # Set at run time by `bind`.
    args: dict[str, Any] = field(default_factory=dict)
    call: ToolCall | None = None
    entry: dict[str, Any] = field(default_factory=dict)
    tools: Any = None
    state: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_tool(self)

    @property
    def tool(self) -> dict[str, Any]:
        """The config entry: CodeCompanion's name for `entry`, kept for tools written for it."""
        return self.entry

    @property
    def function_call(self) -> dict[str, Any]:
        """The call as the model sent it: `id`, `name`, the raw `arguments` text, and the
        stored `{id, type, function = {name, arguments}}` shape around them."""
        if self.call is None:
            return {}
        stored = self.call.to_dict()
        return {**stored, "name": self.call.name, "arguments": self.call.arguments_json()}

    @property
    def request(self) -> dict[str, Any]:
        """The parsed call, as older tools name it: `function_call`."""
        return self.function_call

    @property
    def description(self) -> str:
        """The schema's description."""
        return str(self.function.get("description", ""))

    @property
    def function(self) -> dict[str, Any]:
        """The `function` object of the OpenAI-format schema."""
        function = self.schema.get("function", self.schema)
        return function if isinstance(function, dict) else {}

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        params = self.function.get("parameters")
        return params if isinstance(params, dict) else {"type": "object", "properties": {}}

    def openai_schema(self) -> dict[str, Any]:
        """The schema in OpenAI function form, named as this tool is named."""
        function = dict(self.function)
        function["name"] = self.name
        function.setdefault("parameters", {"type": "object", "properties": {}})
        return {"type": "function", "function": function}

    def prompt_text(self) -> str | None:
        """The tool's system prompt, resolved."""
        if callable(self.system_prompt):
            return str(self.system_prompt(self.schema))
        return self.system_prompt

    def bind(self, call: ToolCall, args: dict[str, Any], entry: dict[str, Any], tools: Any) -> Tool:
        """A fresh copy for one call: cmds and opts are copied so setup may change them."""
        return replace(
            self,
            cmds=list(self.cmds),
            opts=dict(self.opts),
            args=copy.deepcopy(args),
            call=call,
            entry=entry,
            tools=tools,
            state={},
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any], name: str | None = None) -> Tool:
        """Build a tool from CodeCompanion's table shape; unknown keys are an error.

        Older fields (`cmd`, `prompt`, `pre_cmd`, `override_cmds`, `output_prompt`, `request`)
        are mapped onto today's (see legacy.py), each with a log line.
        """
        data = upgrade(data, str(name or data.get("name") or "?"))
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown tool field(s): {', '.join(sorted(unknown))}")
        schema = dict(data.get("schema") or {})
        function = schema.get("function", {})
        tool_name = name or data.get("name") or (function or {}).get("name")
        if not tool_name:
            raise ValueError("a tool needs a name (or a schema with a function name)")
        cmds = data.get("cmds") or []
        if callable(cmds):
            cmds = [cmds]
        return cls(
            name=str(tool_name),
            cmds=list(cmds),
            schema=schema,
            system_prompt=data.get("system_prompt"),
            opts=dict(data.get("opts") or {}),
            env=data.get("env"),
            handlers=dict(data.get("handlers") or {}),
            output=dict(data.get("output") or {}),
        )

    @classmethod
    def coerce(cls, value: Any, name: str | None = None) -> Tool:
        """Accept a Tool, a dict in CodeCompanion's shape or a decorated function."""
        if isinstance(value, Tool):
            return replace(value, name=name) if name and name != value.name else value
        if isinstance(value, dict):
            return cls.from_dict(value, name)
        made = getattr(value, "__codecompanion_tool__", None)
        if isinstance(made, Tool):
            return replace(made, name=name) if name else made
        if callable(value):
            made = tool(value)
            assert isinstance(made, Tool)
            return made if name is None else replace(made, name=name)
        raise TypeError(f"cannot make a tool from {type(value).__name__}")


def _check_tool(made: Tool) -> None:
    """Reject shapes that would only fail later, at run time, with a clear message."""
    if not isinstance(made.name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", made.name):
        raise ValueError(f"tool name {made.name!r}: use 1-64 letters, digits, '_', '-' or '.'")
    _check_cmds(made)
    if not isinstance(made.schema, dict):
        raise ValueError(f"{made.name}: schema must be a dict")
    if not isinstance(made.opts, dict):
        raise ValueError(f"{made.name}: opts must be a dict")
    _check_callbacks(made, "handlers", _HANDLERS)
    _check_callbacks(made, "output", _OUTPUTS)
    if made.env is not None and not callable(made.env):
        raise ValueError(f"{made.name}: env must be a function")


def _is_argv(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(p, str) for p in value)


def _is_flagged(cmd: Any) -> bool:
    """CodeCompanion's `{"cmd": ..., "flag": name}`: a command whose success sets a flag."""
    if not isinstance(cmd, dict) or set(cmd) - {"cmd", "flag"}:
        return False
    command, flag = cmd.get("cmd"), cmd.get("flag")
    return (isinstance(command, str) or _is_argv(command)) and (
        flag is None or isinstance(flag, str)
    )


def _check_cmds(made: Tool) -> None:
    """Every cmd is a function, a command as a list of strings, or `{"cmd", "flag"}`."""
    if not isinstance(made.cmds, list):
        raise ValueError(f"{made.name}: cmds must be a list")
    for index, cmd in enumerate(made.cmds):
        if not (callable(cmd) or _is_argv(cmd) or _is_flagged(cmd)):
            raise ValueError(
                f"{made.name}: cmds[{index}] must be a function, a list of strings or "
                '{"cmd": ..., "flag": name}'
            )


def _check_callbacks(made: Tool, group: str, known: tuple[str, ...]) -> None:
    """`handlers` or `output`: a dict of known keys to functions."""
    table = getattr(made, group)
    if not isinstance(table, dict):
        raise ValueError(f"{made.name}: {group} must be a dict")
    for key, value in table.items():
        if key not in known:
            raise ValueError(f"{made.name}: unknown {group} key {key!r}")
        if not callable(value):
            raise ValueError(f"{made.name}: {group}.{key} must be a function")


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _json_type(annotation: Any) -> dict[str, Any]:
    """A JSON schema fragment for a Python annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _annotated(annotation)
    if origin is typing.Literal:
        return _literal(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _json_type(inner[0]) if len(inner) == 1 else {}
    if origin in (list, tuple, set, frozenset):
        items = typing.get_args(annotation)
        return {"type": "array", "items": _json_type(items[0]) if items else {}}
    if origin is dict:
        return {"type": "object"}
    kind = _JSON_TYPES.get(annotation)
    return {"type": kind} if kind else {}


def _annotated(annotation: Any) -> dict[str, Any]:
    """`Annotated[T, "text"]`: T's fragment, described by the first text."""
    base, *extras = typing.get_args(annotation)
    fragment = _json_type(base)
    texts = [extra for extra in extras if isinstance(extra, str)]
    if texts:
        fragment["description"] = texts[0]
    return fragment


def _literal(annotation: Any) -> dict[str, Any]:
    """`Literal[...]`: an enum, typed when every value has the same JSON type."""
    values = list(typing.get_args(annotation))
    kinds = {_JSON_TYPES.get(type(value)) for value in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    return {"type": kind, "enum": values} if kind else {"enum": values}


def _param_docs(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's first paragraph and its parameter texts (Google, NumPy, reST or Epydoc,
    read by docstring_parser); a docstring it cannot parse gives its first paragraph only."""
    import docstring_parser

    try:
        parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError:
        return " ".join(doc.strip().split("\n\n")[0].split()), {}
    text = parsed.short_description or ""
    if not parsed.blank_after_short_description and parsed.long_description:
        text = f"{text}\n{parsed.long_description}"  # the first paragraph goes on
    params = {
        param.arg_name: " ".join((param.description or "").split()) for param in parsed.params
    }
    return " ".join(text.split("\n\n")[0].split()), params


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    strict: bool = False,
    **opts: Any,
) -> Any:
    """Decorator: a type-hinted function becomes a Tool (schema from signature and docstring).

    A parameter named `tools` is left out of the schema and receives the tool system.
    Other keyword arguments become the tool's opts (e.g. `timeout=10_000` (ms), `read_only=True`).
    """

    def make(func: Callable[..., Any]) -> Tool:
        summary, parameters = _parameters_schema(func)
        tool_name = name or func.__name__
        function: dict[str, Any] = {
            "name": tool_name,
            "description": description or summary or tool_name,
            "parameters": parameters,
        }
        if strict:
            function["strict"] = True
        made = Tool(
            name=tool_name,
            cmds=[_function_cmd(func, inspect.signature(func))],
            schema={"type": "function", "function": function},
            opts={"requires_approval": requires_approval, **opts},
        )
        func.__codecompanion_tool__ = made  # type: ignore[attr-defined]
        return made

    return make(fn) if fn is not None else make


def _parameters_schema(func: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """The docstring's summary, and the JSON schema of `func`'s parameters."""
    hints = typing.get_type_hints(func, include_extras=True)
    summary, docs = _param_docs(inspect.getdoc(func) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    skipped = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    for param in inspect.signature(func).parameters.values():
        if param.name == TOOLS_PARAMETER or param.kind in skipped:
            continue
        prop = _json_type(hints.get(param.name, str))
        if param.name in docs:
            prop["description"] = docs[param.name]
        properties[param.name] = prop
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return summary, schema


def _function_cmd(func: Callable[..., Any], signature: inspect.Signature) -> Callable[..., Any]:
    """A cmd that calls `func(**args)` and returns its value as success data.

    A plain (non-async) function runs in a worker thread so a slow one never stalls the loop.
    """
    names = set(signature.parameters) - {TOOLS_PARAMETER}
    wants_tools = TOOLS_PARAMETER in signature.parameters

    async def cmd(self: Tool, args: dict[str, Any], *_: Any) -> dict[str, Any]:
        kwargs = {k: v for k, v in args.items() if k in names}
        if wants_tools:
            kwargs[TOOLS_PARAMETER] = self.tools
        if inspect.iscoroutinefunction(func):
            value = await func(**kwargs)
        else:
            value = await asyncio.to_thread(func, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        return {"status": "success", "data": value}

    # Outputs are given "the function that ran": the user's, not this wrapper.
    cmd.__codecompanion_function__ = func  # type: ignore[attr-defined]
    return cmd


# How tool code is called: the form a user function is written in, read from its signature.
#
# CodeCompanion's tool API has changed shape over time, and users paste from every version:
#
# - the `callback` form: `cmds` are `fn(self, args, input, output_handler)`, handlers and outputs
#   take `(self, tools, ...)`: `success(self, tools, cmd, stdout)`, `error(self, tools, cmd,
#   stderr, stdout)`, `prompt(self, tools)`, `rejected/cancelled(self, tools, cmd)`,
#   `prompt_condition(self, tools, config)`;
# - the `meta` form (today's): `cmds` are `fn(self, args, opts)` with `opts.input` and
#   `opts.output_cb`; `success(self, stdout, meta)`, `error(self, stderr, meta)`, and
#   `prompt/rejected/cancelled/setup/on_exit/prompt_condition(self, meta)`;
# - older forms: `fn(self, input)` cmds whose `input` is the previous function's output, and
#   `success(self, cmd, output)` outputs.
#
# Where two forms have the same number of parameters the parameter names decide; where the names
# say nothing the objects passed work for both readings (`meta` is also the tool system).


OutputForm = Literal["tools", "meta", "cmd"]
CmdForm = Literal["handler", "opts", "either", "input", "args", "previous", "self"]

_META_NAMES = frozenset({"meta", "opts", "options", "ctx", "context"})
_TOOLS_NAMES = frozenset({"tools", "agent", "tool_system", "system", "_tools"})
_STREAM_NAMES = frozenset(
    {"stdout", "stderr", "output", "out", "err", "error", "result", "results", "data", "lines"}
)
_INPUT_NAMES = frozenset({"input", "input_", "previous", "prev", "last", "inp"})
_ARGS_NAMES = frozenset({"args", "arguments", "params", "parameters", "action", "actions"})


def positional(fn: Callable[..., Any]) -> tuple[list[str], bool]:
    """The names of `fn`'s positional parameters, and whether it takes `*args`."""
    try:
        names, varargs = _positional(fn)
    except TypeError:  # not hashable: read it every time
        names, varargs = _positional.__wrapped__(fn)
    return list(names), varargs


# A call reads the forms of its cmd and outputs each time; inspect.signature is the slow part.
@functools.lru_cache(maxsize=512)
def _positional(fn: Callable[..., Any]) -> tuple[tuple[str, ...], bool]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return (), True
    names = tuple(
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    return names, any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def output_form(fn: Callable[..., Any], kind: str) -> OutputForm:
    """How `output.<kind>` wants its arguments: `(self, tools, cmd, ...)`, the meta form, or
    the oldest `(self, cmd, output)`."""
    names, varargs = positional(fn)
    second = names[1].lower() if len(names) > 1 else ""
    if second in _TOOLS_NAMES:
        return "tools"
    if second == "cmd":
        return "cmd"
    if second in _META_NAMES or (kind in ("success", "error") and second in _STREAM_NAMES):
        return "meta"
    if varargs:
        return "tools"
    if kind in ("success", "error"):
        # (self, stdout, meta) has three; the callback form has four or five.
        return "meta" if len(names) == 3 else "tools"
    # prompt(self, x) reads either way (the meta object is the tool system too);
    # rejected/cancelled(self, tools, cmd) has three, (self, meta) two.
    return "tools" if len(names) >= 3 else "meta"


def cmd_form(fn: Callable[..., Any]) -> CmdForm:
    """How a function cmd wants its arguments.

    - `handler`: `(self, args, input, output_handler)`;
    - `opts`: `(self, args, opts)` with `opts.input`/`opts.output_cb` (today's form);
    - `input`: `(self, args, input)` (the callback form without output_handler);
    - `previous`: `(self, input)`: the previous function's output (the oldest form);
    - `args`: `(self, args)`; `self`: `(self)`.

    A three-parameter cmd whose third name says neither (`either`) is given an object that is
    both the previous result and the opts (`CmdOpts` in runtime/runner.py); it has finished when it
    returns, as in the callback form, unless it calls `output_cb` first.
    """
    names, varargs = positional(fn)
    if varargs or len(names) >= 4:
        return "handler"
    if len(names) == 3:
        third = names[2].lower()
        if third in _INPUT_NAMES:
            return "input"
        return "opts" if third in _META_NAMES else "either"
    if len(names) == 2:
        second = names[1].lower()
        return "previous" if second in _INPUT_NAMES or second == "output" else "args"
    return "self"


def takes_config(fn: Callable[..., Any]) -> bool:
    """True for `prompt_condition(self, tools, config)`, the three-parameter form."""
    names, varargs = positional(fn)
    return varargs or len(names) >= 3


def arity(fn: Callable[..., Any], available: int) -> int:
    """How many of `available` positional arguments `fn` accepts."""
    names, varargs = positional(fn)
    return available if varargs else min(len(names), available)


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts; an awaitable it returns is not awaited."""
    return fn(*args[: arity(fn, len(args))])


async def invoke(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts (CodeCompanion's 3-argument cmds too)."""
    value = call(fn, *args)
    if inspect.isawaitable(value):
        value = await value
    return value


def as_text(value: Any) -> str:
    """Data as text for the model: strings as they are, lists line by line, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return str(value)
