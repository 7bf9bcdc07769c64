"""Calling user code with the arguments it takes, and its values as text for the model."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any


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
