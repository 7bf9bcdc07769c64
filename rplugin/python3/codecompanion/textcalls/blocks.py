"""One block of an answer read as tool calls: an XML `<tool>` block or a JSON call object."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..tools.model.arguments import repair

if TYPE_CHECKING:  # the XML parser loads when an answer holds a <tool> block
    import xml.etree.ElementTree as ElementTree

Source = Literal["xml", "json"]
# Keys under which a JSON call carries its arguments, in order of preference.
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_NAME_KEYS = ("name", "tool", "tool_name")
# Info words of fenced blocks that may hold calls ("" is a block without one).
XML_LANGS = frozenset({"", "xml", "tool", "tool_call"})
JSON_LANGS = frozenset({"", "json", "jsonc", "json5", "tool_call"})
_MAX_BLOCK = 200_000  # characters: anything longer is not a call a model wrote on purpose


@dataclass(frozen=True)
class TextCall:
    """A call read from text: the tool's name, its arguments, and the block it came from."""

    name: str
    arguments: dict[str, Any]
    source: Source
    raw: str = ""


@dataclass(frozen=True)
class Catalog:
    """The tools a chat offers: name → JSON schema of its arguments, and a validator.

    `validate(name, args)` returns why the arguments do not fit the schema, or None.
    """

    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    validate: Callable[[str, dict[str, Any]], str | None] = lambda _name, _args: None

    def offers(self, name: str) -> bool:
        """True if the chat offers a tool called `name`."""
        return name in self.tools

    def properties(self, name: str) -> Mapping[str, Any]:
        """The `properties` of the tool's argument schema (empty when unknown)."""
        schema = self.tools.get(name) or {}
        props = schema.get("properties")
        return props if isinstance(props, Mapping) else {}


def read_block(lang: str, body: str, catalog: Catalog) -> list[TextCall] | None:
    """The calls `body` (a fenced block's text, `lang` its info word) writes, or None.

    XML needs a `<tool>` (or `<tools>`) root with a `<name>`; JSON needs an object (or a list
    of objects) with a `name` and an `arguments` object. A JSON name must be an offered tool,
    so JSON data that happens to have a `name` key stays text; an XML `<tool>` block is a call
    even for a tool that is not offered (the call then gets an error result).
    """
    text = body.strip()
    if not text or len(text) > _MAX_BLOCK:
        return None
    lang = lang.lower()
    if text.startswith("<") and lang in XML_LANGS:
        calls = read_xml(text, catalog)
        if calls is not None:
            return calls
    if text[0] in "{[" and lang in JSON_LANGS:
        return read_json(text, catalog)
    return None


# JSON


def read_json(text: str, catalog: Catalog) -> list[TextCall] | None:
    """Calls from a JSON object or list of objects naming offered tools; None otherwise.

    Objects one after another (small models write a plan of calls that way) are a list. An
    object that does not parse but has a `"name"` key and ends as an object ends is repaired
    first: small models write calls with doubled braces (`{{"name": …}}}}`) or a brace short
    (a block cut off mid-way is not repaired).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        whole = text.startswith("{") and text.endswith("}") and '"name"' in text
        data = _in_a_row(text) or (repair(text) if whole else None)
        if not data:
            return None
    items = data if isinstance(data, list) else [data]
    if not items:
        return None
    calls: list[TextCall] = []
    for item in items:
        call = _json_call(item, catalog)
        if call is None:
            return None  # a list with anything that is not a call is data, not calls
        calls.append(call)
    return calls


def _in_a_row(text: str) -> list[Any] | None:
    """Two or more JSON values written one after another (blanks or commas between); None
    when the text is anything else."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at == len(text):
            return items if len(items) > 1 else None
        try:
            item, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        items.append(item)


def _json_call(item: Any, catalog: Catalog) -> TextCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # the OpenAI shape written out as text
        item = function
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if name is None or not catalog.offers(name):
        return None
    arguments = _json_arguments(item)
    if arguments is None:
        return None
    return TextCall(name, arguments, "json", json.dumps(item, ensure_ascii=False))


def _json_arguments(item: dict[str, Any]) -> dict[str, Any] | None:
    """A call object's arguments (an object, or a JSON string of one); None when the object is
    not shaped like a call."""
    key = next((k for k in _ARGUMENT_KEYS if k in item), None)
    arguments: Any = {} if key is None else item[key]
    if isinstance(arguments, str):  # arguments as a JSON string, as in the wire format
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if key is None and set(item) - {"name", "type", "id"}:
        return None  # extra keys but no arguments: not the shape of a call
    return arguments if isinstance(arguments, dict) else None


# XML


def read_xml(text: str, catalog: Catalog) -> list[TextCall] | None:
    """Calls from `<tool>` elements (one, or several under a `<tools>` root); None otherwise."""
    root = _parse_xml(text)
    if root is not None:
        tools = [root] if root.tag == "tool" else list(root) if root.tag == "tools" else []
        calls = [_xml_call(el, catalog) for el in tools if el.tag == "tool"]
        if calls and all(c is not None for c in calls):
            return [c for c in calls if c is not None]
        return None
    return _lenient_xml(text, catalog)


def _parse_xml(text: str) -> ElementTree.Element | None:
    import xml.etree.ElementTree as ElementTree

    try:
        # The parser rejects DTDs with entities it would expand; a call block never needs one.
        if "<!DOCTYPE" in text or "<!ENTITY" in text:
            return None
        return ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None


def _xml_call(element: ElementTree.Element, catalog: Catalog) -> TextCall | None:
    name_el = element.find("name")
    name = (name_el.text or "").strip() if name_el is not None else element.get("name", "")
    if not name:
        return None
    params = element.find("parameters")
    if params is None:
        params = element.find("arguments")
    values: dict[str, Any] = {}
    if params is not None:
        props = catalog.properties(name)
        children = list(params)
        # The older shape nests the arguments one level deeper, under <inputs>.
        if len(children) == 1 and children[0].tag == "inputs" and "inputs" not in props:
            children = list(children[0])
        for child in children:
            values[child.tag] = _xml_value(child, props.get(child.tag))
    import xml.etree.ElementTree as ElementTree

    raw = ElementTree.tostring(element, encoding="unicode")
    return TextCall(name, values, "xml", raw)


def _xml_value(element: ElementTree.Element, schema: Any) -> Any:
    """An element's value, typed by the property's schema (text stays text when unsure)."""
    children = list(element)
    kind = _schema_type(schema)
    if children:
        item_schema = schema.get("items") if isinstance(schema, Mapping) else None
        tags = {c.tag for c in children}
        if kind == "array" or (kind is None and len(children) > 1 and len(tags) == 1):
            return [_xml_value(c, item_schema) for c in children]
        props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        return {c.tag: _xml_value(c, props.get(c.tag)) for c in children}
    return typed(element.text or "", kind)


def _schema_type(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):  # ["integer", "null"]: the first real type decides
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def typed(text: str, kind: str | None) -> Any:
    """`text` converted to a JSON schema `kind`; left as text when it does not convert."""
    value = text.strip()
    if kind == "string" or kind is None:
        return _trim_block(text)
    if kind == "null" or (value in ("", "null") and kind != "string"):
        return None
    if kind == "boolean":
        lowered = value.lower()
        return True if lowered == "true" else False if lowered == "false" else value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if kind == "integer" and isinstance(decoded, float) and decoded.is_integer():
        return int(decoded)
    return decoded


def _trim_block(text: str) -> str:
    """A string element's text: one line stripped; several without the opening/closing newline."""
    if "\n" not in text.strip():
        return text.strip()
    text = re.sub(r"^[ \t]*\n", "", text, count=1)
    return re.sub(r"\n[ \t]*$", "", text, count=1)


_TAG = r"<{0}>(.*?)</{0}>"


def _lenient_xml(text: str, catalog: Catalog) -> list[TextCall] | None:
    """One call from XML that is not well formed (code with `<` or `&` in an element).

    Only the tool's known parameters are looked for, each taken as the text between its
    first opening and last closing tag, so code containing markup-like text survives.
    """
    if not re.match(r"<tool>\s*<name>", text) or not text.rstrip().endswith("</tool>"):
        return None
    name_match = re.search(_TAG.format("name"), text, re.S)
    name = name_match.group(1).strip() if name_match else ""
    if not name or not catalog.offers(name):
        return None
    values: dict[str, Any] = {}
    for prop, schema in catalog.properties(name).items():
        start_tag, end_tag = f"<{prop}>", f"</{prop}>"
        start, end = text.find(start_tag), text.rfind(end_tag)
        if start < 0 or end < start:
            continue
        inner = text[start + len(start_tag) : end]
        inner = (
            re.sub(r"^<!\[CDATA\[(.*)\]\]>$", r"\1", inner.strip(), flags=re.S)
            if ("<![CDATA[" in inner)
            else inner
        )
        values[prop] = typed(inner, _schema_type(schema))
    return [TextCall(name, values, "xml", text)]
