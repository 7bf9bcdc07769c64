"""`plainly_valid` never accepts what jsonschema refuses, and accepts the builtins' usual calls."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from codecompanion.tools.model.arguments import SchemaValidator, plainly_valid, violations
from codecompanion.workspace import HostOptions, Workspace

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def builtin_schemas() -> list[dict[str, Any]]:
    registry = Workspace(HostOptions()).registry
    entries = (registry.get(name) for name in registry.names())
    return [entry.tool.parameters for entry in entries if entry is not None]


SCHEMAS = builtin_schemas() + [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 3}}},
    {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
    {"type": ["string", "null"], "enum": ["a", "b", None]},
    {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 2},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"type": "integer"},
    {"enum": ["a", "b"]},
    {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
    {"type": "array", "minItems": 2},
    {"type": "object", "required": ["a"]},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},  # unknown: unsure
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},
]


def args_for(schema: dict[str, Any]) -> Any:
    """Objects with the schema's own property names (most values hit real keywords)."""
    names = list((schema.get("properties") or {}).keys()) + ["other"]
    return JSON | st.dictionaries(st.sampled_from(names), JSON, max_size=len(names))


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(SCHEMAS).flatmap(lambda s: st.tuples(st.just(s), args_for(s))))
def test_plainly_valid_arguments_are_valid_for_jsonschema(case: tuple[dict[str, Any], Any]) -> None:
    schema, value = case
    if plainly_valid(value, schema):
        assert Draft202012Validator(schema).is_valid(value), (schema, value)


def test_the_builtins_usual_calls_are_plainly_valid() -> None:
    registry = Workspace(HostOptions()).registry
    read = registry.get("read_file")
    assert read is not None
    args = {"filepath": "a.py", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    required = read.tool.parameters.get("required") or []
    assert plainly_valid({k: args.get(k) for k in required}, read.tool.parameters)
    run = registry.get("run_command")
    assert run is not None
    assert plainly_valid({"cmd": "ls", "unconfined": None}, run.tool.parameters)


def test_arguments_jsonschema_refuses_still_get_its_errors() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    check = SchemaValidator(schema)
    assert violations({"n": 1}, schema, check) == []
    assert violations({}, schema, check) == ["'n' is a required property (at (root))"]
    assert violations({"n": 1.5}, schema, check) == ["1.5 is not of type 'integer' (at n)"]


def test_each_keyword_refuses_what_breaks_it() -> None:
    closed = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    assert plainly_valid({"a": "x"}, closed)
    assert not plainly_valid({"a": "x", "b": 1}, closed)
    assert not plainly_valid({"a": 1}, closed)
    assert not plainly_valid("z", {"enum": ["a", "b"]})
    assert not plainly_valid([1], {"type": "array", "minItems": 2})
    assert not plainly_valid(7, {"type": "integer", "maximum": 3})
    assert not plainly_valid({}, {"type": "object", "required": ["a"]})
    assert not plainly_valid(True, {"type": "integer"})
    assert plainly_valid(None, {"anyOf": [{"type": "string"}, {"type": "null"}]})
    assert not plainly_valid({"x": 1}, {"patternProperties": {"^x": {"type": "string"}}})
