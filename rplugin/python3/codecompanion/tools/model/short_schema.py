"""Tool schemas for a small context window: every description cut to its first sentence.

A chat whose model has a small window (4k–8k tokens, as local servers are often started) spends
a large part of it on the offered tools' schemas before the user's words: `@{files}` is ~1,900
tokens, `@{agent}` more than 4,000. The first sentence of a description says what the tool or
argument is; the rest is guidance a small window cannot afford. Names, types, enums and required
lists are never touched, so every call that validated still validates."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...outside import Json

SMALL_WINDOW = 8192  # tokens: at or under it, "auto" sends the short schemas
# The first sentence: up to the first ".", "!" or "?" followed by a space or the end, not inside
# a quoted example ('"^" inserts…' keeps its quote) and not after a one-letter abbreviation.
_SENTENCE = re.compile(r"^(.+?(?<!\be\.g)(?<!\bi\.e)[.!?])(?=\s|$)", re.S)


def first_sentence(text: str) -> str:
    """`text` up to the end of its first sentence (all of it when there is none)."""
    match = _SENTENCE.match(text.strip())
    return match[1] if match else text.strip()


def shortened(schema: Mapping[str, Json]) -> dict[str, Json]:
    """A copy of `schema` whose `description` strings, at every level, are their first sentence."""
    out: dict[str, Json] = {}
    for key, value in schema.items():
        if key == "description" and isinstance(value, str):
            out[key] = first_sentence(value)
        else:
            out[key] = _shortened_value(value)
    return out


def _shortened_value(value: Json) -> Json:
    if isinstance(value, Mapping):
        return shortened(value)
    if isinstance(value, list):
        return [_shortened_value(item) for item in value]
    return value


def wants_short(setting: object, window: int | None) -> bool:
    """Whether a chat sends short schemas: `short_descriptions` True or False (the default), or
    "auto": when its model's window is known and at most SMALL_WINDOW tokens."""
    if isinstance(setting, bool):
        return setting
    return window is not None and 0 < window <= SMALL_WINDOW
