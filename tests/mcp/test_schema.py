"""Server schemas made portable: refs inlined, keywords providers reject rewritten or dropped."""

from __future__ import annotations

from codecompanion.mcp.schema import clean_schema


def test_pydantic_style_schema_is_inlined_and_trimmed() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "$defs": {"Mode": {"title": "Mode", "enum": ["a", "b"], "type": "string"}},
        "properties": {
            "mode": {"$ref": "#/$defs/Mode", "description": "how"},
            "url": {"type": "string", "format": "uri", "title": "Url"},
            "when": {"type": "string", "format": "date-time"},
            "limit": {"type": ["integer", "null"], "default": 5},
            "kind": {"const": "x"},
        },
        "required": ["mode"],
    }
    out = clean_schema(schema)
    assert out["properties"]["mode"] == {"enum": ["a", "b"], "type": "string", "description": "how"}
    assert out["properties"]["url"] == {"type": "string"}
    assert out["properties"]["when"]["format"] == "date-time"
    assert out["properties"]["limit"] == {"type": "integer", "description": "(default: 5)"}
    assert out["properties"]["kind"] == {"enum": ["x"]}
    assert "$defs" not in out and "$schema" not in out and "title" not in out
    assert out["required"] == ["mode"]


def test_recursive_refs_stop_and_non_objects_become_empty_objects() -> None:
    schema = {
        "type": "object",
        "definitions": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/Node"}}}
        },
        "properties": {"root": {"$ref": "#/definitions/Node"}},
    }
    out = clean_schema(schema)
    assert "$ref" not in str(out)
    assert clean_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert clean_schema(None) == {"type": "object", "properties": {}}
    assert clean_schema({"type": "object"}) == {"type": "object", "properties": {}}


def test_keywords_gemini_lacks_become_the_nearest_it_has() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "old": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "v": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "x": {"type": "string", "not": {"enum": ["a"]}, "if": {}, "then": {}, "else": {}},
        },
        "patternProperties": {"^a": {"type": "string"}},
    }
    out = clean_schema(schema)
    assert out["properties"]["n"] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert out["properties"]["old"] == {"type": "number", "minimum": 0}
    assert out["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert out["properties"]["x"] == {"type": "string"}
    assert "patternProperties" not in out
