"""Asking again for a call that an answer wrote but that could not run, its answer held to the
offered tools' call schema.

A small model offered tools often writes its call as a JSON block with prose after it (so it
reads as an example), or with arguments that do not fit. The same request is sent once more
with the answer held to "one call of an offered tool" (a local server turns the schema into a
grammar); the prefix is unchanged, so the server's prompt cache holds it. Off unless the
adapter's settings say `constrained_calls = True` (on the eval's tasks it never changed an
outcome); it applies only to adapters of servers that take a schema for the answer
(`ConstrainsAnswers`), never to paid providers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..adapters.base import ChatAdapter, ConstrainsAnswers

SETTING = "constrained_calls"
_ANY_ARGUMENTS: dict[str, Any] = {"type": "object"}


def constrains(adapter: ChatAdapter) -> bool:
    """Whether `adapter` is asked again for a call under a schema (when turned on)."""
    extra = getattr(adapter.settings, "extra", {}) or {}
    return isinstance(adapter, ConstrainsAnswers) and extra.get(SETTING, False) is True


def call_schema(schemas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A JSON schema of one call `{"name": …, "arguments": {…}}` of one of the tools whose
    function schemas are `schemas` (the shape a call written as text is read in)."""
    options = [_one_call(schema) for schema in schemas]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _one_call(schema: Mapping[str, Any]) -> dict[str, Any]:
    function = schema.get("function")
    entry = function if isinstance(function, Mapping) else schema
    parameters = entry.get("parameters")
    return {
        "type": "object",
        "properties": {
            "name": {"const": str(entry.get("name"))},
            "arguments": dict(parameters) if isinstance(parameters, Mapping) else _ANY_ARGUMENTS,
        },
        "required": ["name", "arguments"],
    }
