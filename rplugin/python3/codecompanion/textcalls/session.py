"""One request as the chat sends it: which tools go natively, and reading the answer for calls.

`plan_request` decides, per request, whether the offered tools are sent natively or described
in the prompt (rewriting the history for prompt mode), and gives an `AnswerReader` that the
chat feeds the answer's text: it returns the text to show, and at the end the calls written
as text (as ToolCalls with fresh ids, run like native ones) and the text to store.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..messages import Message, ToolCall, ToolResult
from ..tools.model.arguments import conform, violations
from ..tools.model.registry import ToolEntry
from ..tools.runtime.protocol import ToolChat
from .blocks import Catalog
from .mode import asks_recovered, recovers, resolve_mode
from .prompt import PROMPT, RECOVERED, TEXT_CALLS, ToolText, prompt_history
from .quotes import QuoteCheck, read_texts
from .stream import CallScanner, FoundCalls, Piece, Policy, ShownText

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter

log = logging.getLogger("codecompanion.textcalls")

SHOWN = "shown"  # extra of a prompt-mode answer: its text as the buffer shows it
REPEATED = (
    "This is the same call as in the round before, so it was not run again: its result is "
    "above. Go on with the user's request from that result, without calling the tool again."
)


@dataclass
class AnswerReader:
    """Feeds an answer's text through a call scanner (or straight through without one)."""

    scanner: CallScanner | None = None
    new_id: Callable[[], str] = field(default_factory=lambda: _counter())
    calls: list[ToolCall] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    quotes: QuoteCheck | None = None  # blocks copied from what the model read are not calls
    ask_recovered: bool = True  # calls recovered from text are asked about, YOLO or not

    @property
    def policy(self) -> Policy | None:
        """prompt, recover, or None when no call is looked for."""
        return self.scanner.policy if self.scanner is not None else None

    def text(self, delta: str) -> str:
        """The text to show for this piece of the answer."""
        self.raw.append(delta)
        if self.scanner is None:
            return delta
        return self._pieces(self.scanner.feed(delta))

    def finish(self, native_calls: bool = False) -> str:
        """The answer ended: the text still to show; `calls` then holds the calls found.

        A model that made native calls is not second-guessed: text blocks beside them stay text.
        """
        if self.scanner is None:
            return ""
        pieces = self.scanner.close()
        if native_calls and self.policy == "recover":
            return "".join(p.text if isinstance(p, ShownText) else p.raw for p in pieces)
        return self._pieces(pieces)

    def _pieces(self, pieces: list[Piece]) -> str:
        shown = []
        for piece in pieces:
            if isinstance(piece, FoundCalls):
                if self.quotes is not None and self.quotes.quoted(piece):
                    log.warning("a call block copied from what the model read is shown as text")
                    shown.append(piece.raw)
                    continue
                asks = self.policy == "recover" and self.ask_recovered
                for call in piece.calls:
                    made = ToolCall(self.new_id(), call.name, dict(call.arguments), asks=asks)
                    self.calls.append(made)
            else:
                if piece.text.strip() and self.policy == "prompt":
                    # Prose after a call block: the block may be a quote, not the call.
                    self.calls = [dataclasses.replace(c, asks=True) for c in self.calls]
                shown.append(piece.text)
        return "".join(shown)

    def missed(self) -> bool:
        """True when the answer made no call but wrote one that could not be run: a block
        naming an offered tool with arguments that did not read or fit, or a call followed by
        prose (blocks copied from what the model read do not count)."""
        if self.scanner is None or self.calls:
            return False
        quotes = self.quotes
        return any(quotes is None or not quotes.quoted(m) for m in self.scanner.missed)

    def stored(self) -> tuple[str, dict[str, Any]]:
        """The answer's text for the history and its message's extra.

        Prompt mode keeps the call blocks (the model sees its own calls as it wrote them);
        recovered calls become native calls, so their blocks leave the text.
        """
        raw = "".join(self.raw)
        if self.scanner is None or not self.calls:
            return raw, {}
        shown = "".join(self.scanner.shown)
        if self.policy == "prompt":
            return raw, {SHOWN: shown}
        return shown, {}

    def calls_extra(self) -> dict[str, Any]:
        """The extra of the message holding the calls found in the text."""
        if not self.calls:
            return {}
        return {TEXT_CALLS: PROMPT if self.policy == "prompt" else RECOVERED}


@dataclass
class Request:
    """What to send: the history and native tool schemas, and how to read the answer."""

    messages: list[Message]
    tools: list[dict[str, Any]]
    reader: AnswerReader
    mode: str


class OfferedTools(Protocol):
    """What a request needs of a chat's tools: the schemas offered natively (a tool system
    that also lists its `offered` names and `offered_entry` gets them written as text in
    prompt mode)."""

    def schemas(self) -> list[dict[str, Any]]:
        """The offered tools' function schemas."""
        ...


async def plan_request(
    adapter: ChatAdapter, tools: OfferedTools, messages: Sequence[Message]
) -> Request:
    """Native tools, or prompt mode, for this request; and a reader for its answer."""
    schemas = tools.schemas()
    new_id = _id_source(adapter)
    entries = offered_entries(tools)
    model = getattr(adapter.settings, "model", None)
    mode = await resolve_mode(adapter, model) if schemas else "native"
    offered = catalog(entries)
    quotes = QuoteCheck(read_texts(messages), offered)
    if mode == "prompt":
        short = getattr(tools, "short_schemas", False) is True  # a small window (fit_window)
        texts = [tool_text(entry, short) for entry in entries]
        reader = AnswerReader(CallScanner(offered, "prompt"), new_id, quotes=quotes)
        return Request(prompt_history(messages, texts), [], reader, mode)
    recover = bool(schemas) and recovers(adapter)
    scanner = CallScanner(offered, "recover") if recover else None
    reader = AnswerReader(scanner, new_id, quotes=quotes, ask_recovered=asks_recovered(adapter))
    return Request(list(messages), schemas, reader, mode)


def offered_entries(tools: OfferedTools) -> list[ToolEntry]:
    """The entries of the offered, enabled tools (none for a tool system that has no such list)."""
    names = getattr(tools, "offered", None) or []
    lookup = getattr(tools, "offered_entry", None)
    if lookup is None:
        return []
    return [entry for entry in (lookup(name) for name in names) if entry is not None]


def repeats_last_round(messages: Sequence[Message]) -> bool:
    """True when the latest calls, written as text, are exactly the calls of the round before.

    Small models that write calls as text often answer a result by repeating the call; running
    it again would loop until the round cap. Only the round right before counts (a file read
    again after an edit is a new call), and only within the user's current turn.
    """
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    rounds = [m for m in list(messages)[last_user + 1 :] if m.role == "llm" and m.tool_calls]
    if len(rounds) < 2 or not rounds[-1].extra.get(TEXT_CALLS):
        return False
    return _signature(rounds[-1].tool_calls) == _signature(rounds[-2].tool_calls)


def skip_repeated_calls(chat: ToolChat, calls: Sequence[ToolCall]) -> None:
    """Give each repeated call its one result, without running it, on the chat's tool lines."""
    result = ToolResult("success", REPEATED, "not run again: same call as before")
    for call in calls:
        chat.tool_status(call, "pending")
        chat.record_tool_result(call, result)
        chat.tool_status(call, "cancelled", "same call as the round before")


def _signature(calls: Sequence[ToolCall]) -> list[str]:
    return sorted(json.dumps([c.name, c.arguments], sort_keys=True, default=str) for c in calls)


def catalog(entries: Sequence[ToolEntry]) -> Catalog:
    """The offered tools as the call scanner sees them."""
    by_name = {entry.name: entry for entry in entries}

    def validate(name: str, args: dict[str, Any]) -> str | None:
        entry = by_name.get(name)
        if entry is None:
            return "not offered"
        # As a native call is checked: after conforming (a missing nullable argument is null).
        conformed, _note = conform(args, entry.tool.parameters)
        problems = violations(conformed, entry.tool.parameters, entry.validator())
        return "; ".join(problems) if problems else None

    return Catalog({e.name: e.tool.parameters for e in entries}, validate)


def tool_text(entry: ToolEntry, short: bool = False) -> ToolText:
    """An offered tool as prompt mode describes it (`short`: descriptions cut to their first
    sentence, as native schemas are for a small window)."""
    tool = entry.tool
    # A system_prompt function describes the tool itself (it is already a system message).
    own = callable(tool.system_prompt)
    description, parameters = tool.description or entry.description, tool.parameters
    if short:
        from ..tools.model.short_schema import first_sentence, shortened

        description, parameters = first_sentence(description or ""), shortened(parameters)
    return ToolText(
        name=entry.name,
        description=description,
        parameters=parameters,
        own_prompt=own,
        worded=tool.words_results,
    )


def _id_source(adapter: Any) -> Callable[[], str]:
    ids = getattr(adapter, "ids", None)
    return ids if callable(ids) else _counter()


def _counter() -> Callable[[], str]:
    """Ids unique across requests and restored chats (an adapter without its own id source)."""
    return lambda: f"call_{os.urandom(6).hex()}"
