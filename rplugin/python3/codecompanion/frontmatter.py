"""YAML front matter at the top of a Markdown file (`SKILL.md`, `.claude/agents/*.md`).

The block starts with a `---` line as the file's first line and ends at the next `---` line; what
is between is YAML (read by PyYAML's safe loader) and must be a mapping. Anything wrong is one
`FrontMatterError` whose text names the line, so a broken file is one line for the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_FENCE = "---"


class FrontMatterError(ValueError):
    """The front matter is missing or is not a YAML mapping (the message is one line)."""


@dataclass(frozen=True)
class Document:
    """A Markdown file split: its front matter's fields and the text after the block."""

    fields: dict[str, Any]
    body: str


def split(text: str) -> Document:
    """The front matter's fields and the body; FrontMatterError when there is no valid block."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != _FENCE:
        raise FrontMatterError("no front matter (the file must start with a --- line)")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == _FENCE), None)
    if end is None:
        raise FrontMatterError("the front matter has no closing --- line")
    import yaml  # only when a file has front matter: a chat without skills never loads it

    try:
        fields = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"{where}front matter is not valid YAML ({problem})") from None
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        raise FrontMatterError("the front matter must be a mapping of fields (name: value)")
    body = "\n".join(lines[end + 1 :]).strip("\n")
    return Document({str(key): value for key, value in fields.items()}, body)


def text_field(fields: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """A field that must be text (numbers are taken as text); FrontMatterError otherwise."""
    value = fields.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise FrontMatterError(f"`{key}` is missing")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FrontMatterError(f"`{key}` must be text, not {type(value).__name__}")
    return " ".join(str(value).split())


def names_field(fields: dict[str, Any], key: str) -> tuple[str, ...] | None:
    """A list of names, written as a YAML list or as one text split at commas and spaces
    (`Read, Grep` and `Read Grep` both); None when the field is absent."""
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(part for part in value.replace(",", " ").split() if part)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    raise FrontMatterError(f"`{key}` must be a list of names or one line of names")
