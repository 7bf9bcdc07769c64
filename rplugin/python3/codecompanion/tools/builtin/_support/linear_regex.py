"""Regular expressions matched in linear time (RE2): no pattern can stall a search.

Python's `re` backtracks, so a pattern such as `(.*a)*b` or a glob of many `**` can take
minutes on one line while holding the GIL, where no timeout or stop can reach it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_PATTERN = 10_000
_MAX_MEM = 64 << 20  # RE2 refuses patterns whose automaton would need more


class RegexError(ValueError):
    """A pattern that cannot be compiled; the message says why, on one line."""


@dataclass(frozen=True)
class LinearPattern:
    """A compiled pattern; every match runs in time linear in the text."""

    pattern: str
    compiled: Any

    def search(self, text: str) -> bool:
        """True if the pattern matches anywhere in `text`."""
        return self.compiled.search(text) is not None

    def fullmatch(self, text: str) -> bool:
        """True if the pattern matches the whole of `text`."""
        return self.compiled.fullmatch(text) is not None


def compile_linear(
    pattern: str, *, ignore_case: bool = False, dot_all: bool = False, literal: bool = False
) -> LinearPattern:
    """`pattern` (RE2 syntax, close to ripgrep's; plain text with `literal`) compiled.

    RegexError when it is not valid.
    """
    if len(pattern) > MAX_PATTERN:
        raise RegexError(f"the pattern is {len(pattern):,} characters, over {MAX_PATTERN:,}")
    import re2  # loaded with the first search: a chat that searches nothing skips it

    options = re2.Options()
    options.log_errors = False  # RE2 would print to the host's stderr
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_all
    options.literal = literal
    options.max_mem = _MAX_MEM
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise RegexError(text) from None
    return LinearPattern(pattern, compiled)
