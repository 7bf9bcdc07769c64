"""Calling user functions with only the positional arguments they accept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .forms import positional


def arity(fn: Callable[..., Any], available: int) -> int:
    """How many of `available` positional arguments `fn` accepts."""
    names, varargs = positional(fn)
    return available if varargs else min(len(names), available)
