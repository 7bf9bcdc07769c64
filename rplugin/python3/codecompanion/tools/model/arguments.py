"""A call's arguments: repair malformed JSON, validate against the schema, apply user edits."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ...errors import ToolError
from ...outside import Json

log = logging.getLogger("codecompanion.tools")

_MAX_REPORTED = 10


@dataclass(frozen=True)
class Arguments:
    """A call's arguments read: `args` to run with, or an `error` for the model."""

    args: dict[str, Any] | None
    note: str | None = None
    error: str | None = None


def resolve(
    name: str,
    arguments: dict[str, Any],
    raw: str | None,
    schema: dict[str, Any],
    validator: Any = None,
) -> Arguments:
    """The arguments the tool runs with: repaired from `raw` if set, then validated."""
    note = None
    args = arguments
    if raw is not None:
        repaired = repair(raw)
        if repaired is None:
            snippet = raw if len(raw) <= 200 else raw[:200] + "…"
            return Arguments(
                None,
                error=(
                    f"The arguments for the {name} tool are not a JSON object and could not "
                    f"be repaired: {snippet!r}. Call the tool again with valid JSON."
                ),
            )
        args = repaired
        note = (
            f"Note: your arguments for {name} were not valid JSON; they were repaired to "
            f"{json.dumps(args, ensure_ascii=False)}. Check that this is what you meant."
        )
    args, coerced = conform(args, schema)
    if coerced:
        note = "\n".join(n for n in (note, coerced) if n)
    problems = violations(args, schema, validator)
    if problems:
        return Arguments(None, note, invalid_message(name, problems))
    return Arguments(args, note)


def conform(args: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Accept what CodeCompanion's schemas accept: (args, a note for the model, if any).

    A required property that may be null and is missing is null (the tool's default applies);
    a number sent as text (`"100"` for an integer or number property) is read as the number
    when the text is exactly one, and the model is told.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not isinstance(args, dict):
        return args, None
    args = _fill_nulls(args, schema)
    notes = []
    for key, value in list(args.items()):
        number = _number(value, properties.get(key))
        if number is not None:
            args[key] = number
            notes.append(f"`{key}` was sent as the text {json.dumps(value)}")
    if not notes:
        return args, None
    return args, f"Note: {'; '.join(notes)}: read as a number. Send numbers without quotes."


def _fill_nulls(value: Any, schema: Any) -> Any:
    """`value` with every missing required property that may be null set to null, at any depth."""
    if not isinstance(schema, dict):
        return value
    for option in schema.get("anyOf") or []:
        value = _fill_nulls(value, option)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_fill_nulls(item, schema["items"]) for item in value]
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return value
    filled = {key: _fill_nulls(item, properties.get(key)) for key, item in value.items()}
    for key in schema.get("required") or []:
        if key not in filled and _allows(properties.get(key), "null"):
            filled[key] = None
    return filled


def _allows(prop: Any, kind: str) -> bool:
    """True if the property schema `prop` allows the JSON type `kind`."""
    if not isinstance(prop, dict):
        return False
    declared = prop.get("type")
    kinds = declared if isinstance(declared, list) else [declared]
    if kind in kinds:
        return True
    return any(_allows(option, kind) for option in prop.get("anyOf") or [])


def _number(value: Any, prop: Any) -> int | float | None:
    """`value` as the number a property that takes numbers (and not text) means, else None."""
    if not isinstance(value, str) or _allows(prop, "string"):
        return None
    text = value.strip()
    try:
        if _allows(prop, "integer") and re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        if _allows(prop, "number") and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
            number = float(text)
            whole = number.is_integer() and re.fullmatch(r"[+-]?\d+", text)
            return int(number) if whole else number
    except (ValueError, OverflowError):  # more digits than int() takes: not a usable number
        return None
    return None


def repair(text: str) -> dict[str, Any] | None:
    """The JSON object `text` most likely meant, or None when it holds no object."""
    if not text.strip():
        return {}
    import json_repair  # loaded when a model first sends broken JSON

    try:
        value = json_repair.loads(text)
    except Exception:  # the library is best effort; any failure means "not repairable"
        log.debug("json_repair failed on %r", text[:200], exc_info=True)
        return None
    return value if isinstance(value, dict) else None


class SchemaError(Protocol):
    """One way arguments break a schema, as the validator reports it."""

    message: str
    path: Iterable[object]
    absolute_path: Iterable[object]


class Validator(Protocol):
    """A schema compiled once (jsonschema's validator classes)."""

    def iter_errors(self, instance: Json) -> Iterable[SchemaError]:
        """Every way `instance` breaks the schema."""
        ...


class SchemaValidator:
    """One tool's argument check: arguments `plainly_valid` for its schema pass as they are;
    jsonschema's validator (compiled on first need, with the library's ~5 MiB) judges the rest."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._compiled: Validator | Literal[False] | None = None

    def compiled(self) -> Validator | None:
        """jsonschema's validator for the schema; None when the schema itself is invalid."""
        if self._compiled is None:
            self._compiled = compile_validator(self.schema) or False
        return self._compiled or None


def compile_validator(schema: dict[str, Any]) -> Validator | None:
    """A validator for `schema`, checked against its metaschema once; None if it is invalid."""
    # Loaded when a call's arguments are not plainly valid: most tool rounds never pay its ~5 MiB.
    from jsonschema import exceptions, validators

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        # The tool author's mistake, not the model's: run unvalidated and say so in the log.
        log.error("tool schema is invalid, arguments not validated: %s", exc.message)
        return None
    compiled: Validator = cls(schema)
    return compiled


def violations(
    args: Json, schema: dict[str, Any], validator: SchemaValidator | Validator | None = None
) -> list[str]:
    """Every way `args` breaks `schema`, as `message (at path)` lines; [] when valid.

    `validator` is a `SchemaValidator` or a compiled one (see `compile_validator`), which saves
    checking the schema itself on every call.
    """
    if plainly_valid(args, schema):
        return []
    if isinstance(validator, SchemaValidator):
        validator = validator.compiled()
        if validator is None:
            return []
    elif validator is None:
        validator = compile_validator(schema)
        if validator is None:
            return []
    errors = sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.path])
    lines = []
    for error in errors[:_MAX_REPORTED]:
        path = "/".join(str(part) for part in error.absolute_path) or "(root)"
        lines.append(f"{error.message} (at {path})")
    if len(errors) > _MAX_REPORTED:
        lines.append(f"... and {len(errors) - _MAX_REPORTED} more")
    return lines


def invalid_message(name: str, problems: list[str]) -> str:
    """The error result for arguments that break the schema."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        f"The arguments for the {name} tool do not match its schema, so it did not run:\n"
        f"{listed}\nFix the arguments and call the tool again."
    )


def edited(
    name: str, text: str, old: dict[str, Any], field: str | None, schema: dict[str, Any]
) -> Arguments:
    """The arguments after the user edited them: `text` is JSON, or the value of `field`."""
    if field is not None:
        args: dict[str, Any] | None = {**old, field: text.strip()}
    else:
        try:
            decoded = json.loads(text)
            args = decoded if isinstance(decoded, dict) else None
        except ValueError:
            args = repair(text)
    if args is None:
        return Arguments(
            None, error=f"The user's edit of the {name} arguments is not a JSON object."
        )
    problems = violations(args, schema)
    if problems:
        listed = "\n".join(f"- {problem}" for problem in problems)
        return Arguments(
            None, error=f"The user edited the {name} arguments, but the edit is invalid:\n{listed}"
        )
    note = (
        f"Note: the user edited the arguments before the {name} tool ran; it ran with "
        f"{json.dumps(args, ensure_ascii=False)}."
    )
    return Arguments(args, note)


# Reading single arguments in a tool's code: a clear ToolError when one has the wrong type.


def arg_text(args: Mapping[str, Any], key: str) -> str:
    """A required string argument; ToolError when it is missing or of the wrong type."""
    value = args.get(key)
    if not isinstance(value, str):
        got = "missing" if value is None else f"a {type(value).__name__}"
        raise ToolError(f"`{key}` must be a string (got {got}).")
    return value


def arg_opt_text(args: Mapping[str, Any], key: str) -> str | None:
    """An optional string argument: None when null or missing."""
    return None if args.get(key) is None else arg_text(args, key)


def arg_int(args: Mapping[str, Any], key: str, default: int | None = None) -> int:
    """An integer argument (a whole float such as 3.0 is accepted); null gives `default`."""
    value = args.get(key)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        got = "missing" if value is None else repr(value)
        raise ToolError(f"`{key}` must be an integer (got {got}).")
    if isinstance(value, float) and not value.is_integer():
        raise ToolError(f"`{key}` must be a whole number (got {value}).")
    return int(value)


def arg_bool(args: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean argument; null gives `default`."""
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolError(f"`{key}` must be true, false or null (got {value!r}).")
    return value


# Arguments plainly valid for a schema, told without the jsonschema library. Importing it (with
# referencing, rpds, attrs and the metaschemas) costs the host ~5 MiB and ~40 ms of CPU, and the
# builtins' schemas use a few keywords only. `plainly_valid` answers True only where it is
# certain: every keyword that applies is one it reads, and the value meets it. Anything else (a
# keyword it does not know, a float for an integer, a value that breaks the schema) is False:
# jsonschema then decides and words the errors, so nothing it would refuse is accepted.

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
