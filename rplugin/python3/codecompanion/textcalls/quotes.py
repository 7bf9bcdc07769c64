"""Call blocks the model copied from what it read: never run as calls.

A model that reads a README, a web page or a tool's output can quote a call block it found
there (```json {"name": "create_file", ...}```); running it would let the file's author call
tools. A block whose text appears, blanks aside, in a tool result or in context attached to
the conversation, or whose calls are the calls such a text holds, is shown as text instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..messages import Message
from .blocks import Catalog, TextCall
from .stream import CallScanner, FoundCalls

_MIN_QUOTE = 12  # characters: shorter blocks say too little to be told apart


def _flat(text: str) -> str:
    return " ".join(text.split())


def _signature(call: TextCall) -> str:
    return json.dumps([call.name, call.arguments], sort_keys=True, default=str)


def read_texts(messages: Sequence[Message]) -> list[str]:
    """What the model read in this conversation: tool results and attached context."""
    texts: list[str] = []
    for message in messages:
        content = message.content or ""
        if message.role == "tool":
            texts.append(content)
        elif message.role == "user":
            typed = message.extra.get("typed")
            if not message.visible or (isinstance(typed, str) and content != typed):
                texts.append(content)  # context added to (or sent beside) what the user typed
    return [text for text in texts if text]


@dataclass
class QuoteCheck:
    """Tells whether a call block was copied from what the model read."""

    texts: list[str]
    catalog: Catalog
    _flat_texts: list[str] | None = None
    _calls: set[str] = field(default_factory=set)

    def quoted(self, found: FoundCalls) -> bool:
        """True if `found`'s block appears in what was read, or its calls are ones it holds."""
        if not self.texts:
            return False
        if self._flat_texts is None:  # read lazily: most answers make no text calls
            self._flat_texts = [_flat(text) for text in self.texts]
            self._calls = {_signature(c) for text in self.texts for c in _calls_in(text, self)}
        body = _flat(_unfenced(found.raw))
        if len(body) >= _MIN_QUOTE and any(body in text for text in self._flat_texts):
            return True
        return any(_signature(call) in self._calls for call in found.calls)


def _unfenced(raw: str) -> str:
    """A block's text without its fence lines."""
    lines = raw.strip().splitlines()
    if len(lines) >= 2 and lines[0].lstrip().startswith(("```", "~~~")):
        lines = lines[1:-1] if lines[-1].strip().startswith(("```", "~~~")) else lines[1:]
    return "\n".join(lines)


def _calls_in(text: str, check: QuoteCheck) -> list[TextCall]:
    """The calls a text holds, read as prompt mode reads an answer."""
    scanner = CallScanner(check.catalog, "prompt")
    pieces = [*scanner.feed(text), *scanner.close()]
    return [call for piece in pieces if isinstance(piece, FoundCalls) for call in piece.calls]
