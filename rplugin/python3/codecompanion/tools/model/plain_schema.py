"""Arguments that plainly satisfy a tool's schema, told without the jsonschema library.

A tool round checks every call's arguments against the tool's JSON schema. Importing jsonschema
(with referencing, rpds, attrs and the metaschemas) costs the host ~5 MiB and ~40 ms of CPU, and
the builtins' schemas use a few keywords only. `plainly_valid` answers True only where it is
certain: every keyword that applies is one it reads, and the value meets it. Anything else (a
keyword it does not know, a float for an integer, a value that breaks the schema) is False:
jsonschema then decides and words the errors. So it never accepts what jsonschema would refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Keywords that never change whether a value is valid (format is not asserted by the
# validator `arguments.compile_validator` builds).
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "format"})

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def plainly_valid(value: Any, schema: Any) -> bool:
    """True when `value` certainly meets `schema`; False when unsure or invalid."""
    if not isinstance(schema, dict):
        return False
    for keyword, rule in schema.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword == "additionalProperties":
            if not _additional(value, rule, schema.get("properties")):
                return False
            continue
        check = _KEYWORDS.get(keyword)
        if check is None or not check(value, rule):
            return False
    return True


def _type(value: Any, rule: Any) -> bool:
    names = rule if isinstance(rule, list) else [rule]
    return any(isinstance(n, str) and n in _TYPES and _TYPES[n](value) for n in names)


def _properties(value: Any, rule: Any) -> bool:
    if not isinstance(rule, dict):
        return False
    if not isinstance(value, dict):
        return True
    return all(plainly_valid(value[key], sub) for key, sub in rule.items() if key in value)


def _required(value: Any, rule: Any) -> bool:
    if not isinstance(rule, list) or not all(isinstance(key, str) for key in rule):
        return False
    return not isinstance(value, dict) or all(key in value for key in rule)


def _additional(value: Any, rule: Any, properties: Any) -> bool:
    """additionalProperties: the keys `properties` does not name (all of them without it)."""
    if not isinstance(rule, (bool, dict)) or not isinstance(properties, (dict, type(None))):
        return False
    if not isinstance(value, dict) or rule is True:
        return True
    extra = [key for key in value if key not in (properties or {})]
    if rule is False:
        return not extra
    return all(plainly_valid(value[key], rule) for key in extra)


def _items(value: Any, rule: Any) -> bool:
    if not isinstance(rule, dict):
        return False
    return not isinstance(value, list) or all(plainly_valid(item, rule) for item in value)


def _enum(value: Any, rule: Any) -> bool:
    # Only text against text: JSON equality of numbers and booleans differs from Python's.
    return isinstance(rule, list) and isinstance(value, str) and value in rule


def _any_of(value: Any, rule: Any) -> bool:
    return isinstance(rule, list) and any(plainly_valid(value, sub) for sub in rule)


def _bound(kind: Callable[[Any], bool], measure: Callable[[Any], Any], least: bool) -> Any:
    """A check of minimum/maximum-like keywords: applies only to values of `kind`."""

    def check(value: Any, rule: Any) -> bool:
        if not isinstance(rule, (int, float)) or isinstance(rule, bool):
            return False
        if not kind(value):
            return True
        return bool(measure(value) >= rule) if least else bool(measure(value) <= rule)

    return check


def _itself(value: Any) -> Any:
    return value


_KEYWORDS: dict[str, Callable[[Any, Any], bool]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "items": _items,
    "enum": _enum,
    "anyOf": _any_of,
    "minItems": _bound(_TYPES["array"], len, least=True),
    "maxItems": _bound(_TYPES["array"], len, least=False),
    "minLength": _bound(_TYPES["string"], len, least=True),
    "maxLength": _bound(_TYPES["string"], len, least=False),
    "minimum": _bound(_TYPES["number"], _itself, least=True),
    "maximum": _bound(_TYPES["number"], _itself, least=False),
}
