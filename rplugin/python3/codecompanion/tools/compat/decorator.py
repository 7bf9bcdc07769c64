"""The `@tool` decorator: a type-hinted function becomes a Tool, its schema read from the
signature and the docstring; the function is the Tool's one cmd."""

from __future__ import annotations

import asyncio
import inspect
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

from ...outside import UserValue
from .table import Tool

if TYPE_CHECKING:
    from .call import TableCall

# A parameter of a decorated function with this name receives the tool system, not a model value.
TOOLS_PARAMETER = "tools"

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


@overload
def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    strict: bool = False,
    **opts: UserValue,
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    strict: bool = False,
    **opts: UserValue,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    strict: bool = False,
    **opts: UserValue,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Decorator: a type-hinted function becomes a Tool (schema from signature and docstring).

    A parameter named `tools` is left out of the schema and receives the tool system as
    CodeCompanion's callbacks see it (`tools.cwd`, `tools.chat`, ...). Other keyword arguments
    become the tool's opts (e.g. `timeout=10_000` (ms), `read_only=True`).
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

    async def cmd(self: TableCall, args: dict[str, Any], *_: Any) -> dict[str, Any]:
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
