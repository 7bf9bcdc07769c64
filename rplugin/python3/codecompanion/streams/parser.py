"""Incremental decoding of provider bodies: bytes in any split become normalized events.

A `ResponseParser` detects the body's shape from its first byte: Server-Sent Events, or JSON
(newline-delimited objects, or one document, possibly pretty-printed). Provider subclasses only
see decoded objects, through `on_object`.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..adapters.base import Event, Finish, ReasoningDelta, TextDelta, ToolCallEvent, Usage
from ..adapters.http_errors import one_line
from ..errors import AdapterError, ProviderError
from ..messages import ToolCall
from ..outside import Json
from .framing import (
    JSON_ERRORS,
    MISSING,
    OPENERS,
    STRAY_LINES,
    JSONSeqDecoder,
    SSEDecoder,
    SSEMessage,
    decode_data,
)
from .lines import LineSplitter
from .text_repair import clean_text, clean_value, high_surrogate

log = logging.getLogger("codecompanion.adapters")

_GENERATED_ID = re.compile(r"call_(\d+)$")
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "function_call": "tool_calls",
    "completed": "stop",
    "incomplete": "length",
}


class IdFactory:
    """Generates `call_<n>` ids for providers that send none, unique within a conversation."""

    def __init__(self) -> None:
        self._count = itertools.count(1)
        self._last = 0

    def __call__(self) -> str:
        self._last = next(self._count)
        return f"call_{self._last}"

    def observe(self, ids: Iterable[str]) -> None:
        """Skip past generated ids already present in the history (a restored chat)."""
        top = max((int(m.group(1)) for i in ids if (m := _GENERATED_ID.match(i))), default=0)
        if top > self._last:
            self._count = itertools.count(top + 1)
            self._last = top


def make_call(
    call_id: str | None, name: str, arguments: Json, new_id: Callable[[], str]
) -> ToolCall:
    """One complete call; empty arguments mean {}, text that is not a JSON object is kept raw."""
    cid = clean_text(call_id or new_id())
    name = clean_text(name)
    if isinstance(arguments, dict):
        return ToolCall(cid, name, _cleaned(arguments))
    if arguments is None:
        return ToolCall(cid, name, {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    if not text.strip():
        return ToolCall(cid, name, {})
    text = clean_text(text)
    try:
        decoded = json.loads(text)
    except JSON_ERRORS:
        return ToolCall(cid, name, {}, text)
    if decoded is None:
        return ToolCall(cid, name, {})
    if not isinstance(decoded, dict):
        return ToolCall(cid, name, {}, text)
    return ToolCall(cid, name, _cleaned(decoded))


def _cleaned(arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        value: dict[str, Any] = clean_value(arguments)
    except RecursionError:  # nested past what the cleaner walks: the JSON decoder allowed it
        return arguments
    return value


class ResponseParser:
    """Bytes of one response in, normalized events out; a pure object, no I/O.

    `feed` and `close` never raise: an error object the provider sent inside the stream
    stops parsing and is kept in `error` (use `raise_for_error`). A body of plain text and no
    JSON at all (a proxy's or a quota message with status 200) ends as an error, never as an
    empty answer.
    """

    label: str = "The provider"

    def __init__(self, new_id: Callable[[], str] | None = None) -> None:
        self.new_id: Callable[[], str] = new_id or IdFactory()
        self.error: AdapterError | None = None
        self.finished = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.calls: list[ToolCall] = []
        self._lines = LineSplitter()
        self._mode: str | None = None
        self._sse = SSEDecoder()
        self._seq = JSONSeqDecoder()
        self._objects = 0
        self._skipped = 0
        self._held: dict[type, str] = {}

    def feed(self, data: bytes) -> list[Event]:
        """The events completed by this piece of the body (none after its end marker)."""
        if self.error is not None or not data or self.finished:
            return []
        out: list[Event] = []
        self._lines_in(self._lines.feed(data), out)
        return self._mend(out)

    def close(self) -> list[Event]:
        """The events left at the end of the body, ending with one Finish."""
        out: list[Event] = []
        if self.error is None:
            self._lines_in(self._lines.close(), out)
        if self.error is None:
            message = self._sse.flush()
            if message is not None:
                self._dispatch_sse(message, out)
            for doc in self._seq.close():
                self._dispatch(None, doc, out)
        if self.error is None:
            out += self.finish()
        return self._mend(out, final=True)

    def _mend(self, events: list[Event], final: bool = False) -> list[Event]:
        """Text events whose characters are whole: a surrogate pair split across two events is
        joined (its first half held back), lone halves become U+FFFD. Consecutive text events
        of one kind become one: a read of a fast stream carries hundreds of small deltas, and
        each would cost the chat its own trip (the text and its order are the same)."""
        out: list[Event] = []
        for event in _joined(events):
            if isinstance(event, (TextDelta, ReasoningDelta)):
                kind = type(event)
                text = self._held.pop(kind, "") + event.text
                if text and high_surrogate(text[-1]) and not final:
                    text, self._held[kind] = text[:-1], text[-1]
                if text:
                    out.append(kind(clean_text(text)))
                continue
            if self._held and (final or isinstance(event, Finish)):
                out += [kind("\ufffd") for kind in self._held]  # the second half never came
                self._held.clear()
            out.append(event)
        return out

    @property
    def skipped(self) -> list[str]:
        """The first few stream lines or event data that could not be read."""
        return self._sse.stray

    def raise_for_error(self) -> None:
        """Raise the provider's in-stream error, if one arrived."""
        if self.error is not None:
            raise self.error

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """Turn one decoded object of the body into events (provider-specific)."""
        raise NotImplementedError

    def flush_calls(self) -> list[Event]:
        """Calls still being assembled, now complete (provider-specific)."""
        return []

    def emit_call(self, call: ToolCall) -> ToolCallEvent:
        """Record and wrap one complete call."""
        self.calls.append(call)
        return ToolCallEvent(call)

    def text_error(self, text: str) -> AdapterError:
        """The error for a body that held only `text`, no JSON (adapters name known messages)."""
        quote = one_line(text, 80)
        return ProviderError(f"{self.label} sent a response that could not be read: {quote}")

    def finish(self) -> list[Event]:
        """Pending calls, usage and the single Finish event."""
        if self.finished:
            return []
        self.finished = True
        if not self._objects and self._sse.stray:
            self.error = self.text_error("\n".join(self._sse.stray))
            return []
        out = self.flush_calls()
        if self.usage is not None:
            out.append(self.usage)
        reason = self.finish_reason.lower() if self.finish_reason else None
        reason = FINISH_REASONS.get(reason, reason) if reason else None
        if self.calls and reason in (None, "stop"):
            reason = "tool_calls"
        out.append(Finish(reason or "stop"))
        return out

    def _lines_in(self, lines: list[str], out: list[Event]) -> None:
        if self.finished:
            return  # whatever follows the end marker (keep-alive comments) is not the answer
        if self._mode is None:
            lines = self._detect(lines)
        if self._mode == "sse":
            read = self._sse.line
            for line in lines:  # the loop of every streamed event: only a dispatch ends it
                message = read(line)
                if message is not None:
                    self._dispatch_sse(message, out)
                    if self.finished or self.error is not None:
                        return
            return
        for line in lines:
            for doc in self._seq.line(line):
                self._dispatch(None, doc, out)
            if self.finished or self.error is not None:
                return

    def _detect(self, lines: list[str]) -> list[str]:
        """The body's shape from its first non-blank line; the lines from that one on."""
        for index, line in enumerate(lines):
            head = line.lstrip()[:1]
            if head:
                self._mode = "json" if head in OPENERS else "sse"
                return lines[index:]
        return []

    def _dispatch_sse(self, message: SSEMessage, out: list[Event]) -> None:
        data = message.data
        if "[DONE]" in data and data.strip() == "[DONE]":
            out += self.finish()
            return
        doc = message.parsed
        if doc is MISSING:
            try:
                doc = decode_data(data)
            except JSON_ERRORS:
                self._skip("malformed stream data %.80r", data)
                if len(self._sse.stray) < STRAY_LINES:
                    self._sse.stray.append(data)
                return
        self._dispatch(message.event, doc, out)

    def _dispatch(self, event: str | None, doc: Any, out: list[Event]) -> None:
        if isinstance(doc, list):
            for item in doc:
                self._dispatch(event, item, out)
            return
        if not isinstance(doc, dict):
            self._skip("unexpected stream value %.80r", doc)
            return
        self._objects += 1
        try:
            out += self.on_object(event, doc)
        except AdapterError as exc:
            self.error = exc
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError):
            # Hostile or odd shapes (e.g. an index of Infinity) are skipped, never raised.
            self._skip("unexpected stream object %.120r", doc, exc_info=True)

    def _skip(self, what: str, value: Any, exc_info: bool = False) -> None:
        """Log a skipped piece of the body: the first few only (a hostile stream is endless)."""
        self._skipped += 1
        if self._skipped <= STRAY_LINES:
            log.warning("skipping " + what, value, exc_info=exc_info)
        elif self._skipped == STRAY_LINES + 1:
            log.warning("skipping more of the stream (not logged)")


def _joined(events: list[Event]) -> list[Event]:
    """`events` with each run of consecutive text (or reasoning) deltas as one delta."""
    out: list[Event] = []
    run: list[TextDelta | ReasoningDelta] = []
    for event in events:
        if run and type(event) is type(run[0]):
            run.append(event)
            continue
        if run:
            out.append(_one(run))
        if isinstance(event, (TextDelta, ReasoningDelta)):
            run = [event]
        else:
            run = []
            out.append(event)
    if run:
        out.append(_one(run))
    return out


def _one(run: list[TextDelta | ReasoningDelta]) -> Event:
    return run[0] if len(run) == 1 else type(run[0])("".join(e.text for e in run))


def text_events(text: Json, reasoning: bool = False) -> list[Event]:
    """A one-element event list for non-empty text, else none."""
    if not isinstance(text, str) or not text:
        return []
    return [ReasoningDelta(text) if reasoning else TextDelta(text)]


def assemble_message(events: Iterable[Event]) -> dict[str, Any]:
    """The assistant message the events describe: content, reasoning and tool calls."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, ToolCallEvent):
            call = event.call
            entry: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
            if call.raw_arguments is not None:
                entry["raw_arguments"] = call.raw_arguments
            calls.append(entry)
    return {
        "content": "".join(text) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": calls,
    }
