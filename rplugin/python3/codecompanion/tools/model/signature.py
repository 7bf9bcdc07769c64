"""Calling user functions with only the positional arguments they accept."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def arity(fn: Callable[..., Any], available: int) -> int:
    """How many of `available` positional arguments `fn` accepts."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return available
    count = 0
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return available
        if param.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            count += 1
    return min(count, available)
