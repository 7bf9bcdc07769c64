"""Provider text made encodable: JSON escapes can carry half a character."""

from __future__ import annotations

from typing import Any


def clean_text(text: str) -> str:
    """`text` that can be encoded: surrogate pairs joined, lone surrogates replaced by U+FFFD.

    JSON escapes (`"\\ud83d"`) can give a string half a character; Neovim and the chat file
    need real characters.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_value(value: Any) -> Any:
    """A decoded JSON value with every string (keys included) passed through `clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


def high_surrogate(char: str) -> bool:
    """True for the first half of a UTF-16 surrogate pair."""
    return "\ud800" <= char <= "\udbff"
