"""A catalog of two tools for the text-call tests, validated with jsonschema as the chat does."""

from __future__ import annotations

from typing import Any

import jsonschema

from codecompanion.textcalls.blocks import Catalog

CALCULATOR = {
    "type": "object",
    "properties": {
        "num1": {"type": "integer"},
        "num2": {"type": "integer"},
        "operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]},
    },
    "required": ["num1", "num2", "operation"],
    "additionalProperties": False,
}
CODE_RUNNER = {
    "type": "object",
    "properties": {"lang": {"type": "string"}, "code": {"type": "string"}},
    "required": ["lang", "code"],
}
READ_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "start": {"type": ["integer", "null"]},
        "paths": {"type": "array", "items": {"type": "string"}},
        "flags": {"type": "object", "properties": {"all": {"type": "boolean"}}},
    },
    "required": ["path"],
}
SCHEMAS = {"calculator": CALCULATOR, "code_runner": CODE_RUNNER, "read_file": READ_FILE}


def validate(name: str, args: dict[str, Any]) -> str | None:
    """The first schema violation, or None."""
    errors = list(jsonschema.Draft202012Validator(SCHEMAS[name]).iter_errors(args))
    return errors[0].message if errors else None


CATALOG = Catalog(SCHEMAS, validate)
