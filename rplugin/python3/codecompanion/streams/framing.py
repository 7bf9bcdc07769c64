"""Framing of provider bodies: lines become Server-Sent Events or JSON documents.

The shapes `ResponseParser` (parser.py) reads a body as, kept apart from what the events mean.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("codecompanion.adapters")

# The decoder's C scanner: one event's data decoded without json.loads' per-call overhead.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
MISSING = object()
STRAY_LINES = 3  # non-JSON lines kept to quote a body that is only text
OPENERS = ("{", "[")
CLOSERS = ("}", "]")

# Deeply nested JSON overflows the decoder's recursion: that is malformed data too.
JSON_ERRORS = (ValueError, RecursionError)


def decode_data(text: str) -> Any:
    """json.loads for one event's data, without its per-call checks when the text is plain."""
    try:
        doc, end = _scan(text, 0)
    except StopIteration:  # leading whitespace or not JSON: the general decoder decides
        return json.loads(text)
    if end != len(text) and text[end:].strip():
        return json.loads(text)  # raises ValueError with the usual message
    return doc


@dataclass
class SSEMessage:
    """One dispatched server-sent event."""

    event: str | None
    data: str
    parsed: Any = MISSING


class SSEDecoder:
    """Server-Sent Events from lines, lenient about captures that omit the blank separators."""

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._parsed: Any = MISSING
        self.stray: list[str] = []  # lines that are no SSE field (the first few)

    def line(self, line: str) -> SSEMessage | None:
        """Feed one line; returns the event it completed, if any."""
        if not line:
            return self.flush()
        if line[:5] == "data:":  # nearly every line: skip the general parsing below
            done = self._complete() if self._data else None
            self._data.append(line[6:] if line[5:6] == " " else line[5:])
            return done
        if line.startswith(":"):
            log.debug("skipping SSE comment %.80s", line)
            return None
        name, colon, value = line.partition(":")
        if not colon and line.lstrip().startswith("{"):
            name, value = "data", line  # a bare JSON line (some servers send errors this way)
        elif value.startswith(" "):
            value = value[1:]
        if name == "data":
            done = self._complete() if self._data else None
            self._data.append(value)
            return done
        if name == "event":
            done = self.flush() if self._data else None
            self._event = value
            return done
        if name not in ("id", "retry") and len(self.stray) < STRAY_LINES:
            log.warning("skipping unknown stream line %.80r", line)  # the first few only
            self.stray.append(line)
        return None

    def flush(self) -> SSEMessage | None:
        """Dispatch what is pending (a blank line, or the end of the body)."""
        if not self._data:
            self._event = None
            return None
        message = SSEMessage(self._event, "\n".join(self._data), self._parsed)
        self._event, self._data, self._parsed = None, [], MISSING
        return message

    def _complete(self) -> SSEMessage | None:
        # Without blank separators, a new data line ends the previous event if that is whole JSON.
        text = "\n".join(self._data)
        stripped = text.strip()
        if stripped == "[DONE]":
            return self.flush()
        if not (stripped.startswith(OPENERS) and stripped.endswith(CLOSERS)):
            return None
        try:
            self._parsed = json.loads(text)
        except JSON_ERRORS:
            return None
        return self.flush()


class JSONSeqDecoder:
    """Newline-delimited JSON, or one (pretty-printed) JSON document, from lines."""

    def __init__(self) -> None:
        self._pending: list[str] = []

    def line(self, line: str) -> list[Any]:
        """Feed one line; returns the documents it completed."""
        stripped = line.strip()
        if not stripped and not self._pending:
            return []
        # A new document starts at column 0; indented lines belong to a pretty-printed one.
        if line.startswith(OPENERS) or (not self._pending and stripped.startswith(OPENERS)):
            try:
                doc = json.loads(stripped)
            except JSON_ERRORS:
                doc = MISSING
            if doc is not MISSING or self._pending:
                self._drop_pending()
            if doc is not MISSING:
                return [doc]
        self._pending.append(line)
        if line.startswith(CLOSERS):
            return self._try_pending()
        return []

    def close(self) -> list[Any]:
        """Whatever document is still pending at the end of the body."""
        if not self._pending:
            return []
        docs = self._try_pending()
        self._drop_pending()
        return docs

    def _try_pending(self) -> list[Any]:
        try:
            doc = json.loads("\n".join(self._pending))
        except JSON_ERRORS:
            return []
        self._pending = []
        return [doc]

    def _drop_pending(self) -> None:
        if self._pending and "".join(self._pending).strip():
            log.warning("skipping malformed JSON %.80r", "\n".join(self._pending))
        self._pending = []
