"""Token counts: an estimate of any text or message, kept true by the provider's reports.

No tokenizer matches every provider, so text is estimated from its words and symbols and the
estimate is scaled by a ratio learned from each `usage` the provider reports: the next
estimate of the same kind of text lands where the provider would count it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages import Message

# One token each: six letters of a word (BPE vocabularies cut long identifiers; the regex takes
# a word six letters at a time), a digit (some tokenizers take one digit per token, others
# three: counting each errs on the safe side until the first `usage`), a newline run, a run of
# indentation, or one symbol.
_PIECES = re.compile(r"[A-Za-z]{1,6}|\d|\n+|[ \t]{2,}|[^\sA-Za-z\d]")
MESSAGE_OVERHEAD = 4  # role and separators every chat template adds per message
REQUEST_OVERHEAD = 3  # the assistant's turn opener


def estimate_text(text: str | None) -> int:
    """Raw estimate of the tokens of `text` (before the learned ratio)."""
    if not text:
        return 0
    # Counted in C (a long answer is estimated as it is stored, before its tail is shown).
    count = _PIECES.subn("", text)[1]
    if not text.isascii():
        # Text outside ASCII (CJK, emoji) costs about one token per character the regex skips.
        count += len(text) - len(text.encode("ascii", "ignore"))
    return count


class TextCounts:
    """`estimate_text` remembered per text: a long chat re-counts only what is new."""

    def __init__(self, limit: int = 4096) -> None:
        self._known: dict[str, int] = {}
        self._limit = limit

    def __call__(self, text: str | None) -> int:
        if not text:
            return 0
        known = self._known.get(text)
        if known is None:
            if len(self._known) >= self._limit:
                self._known.clear()
            known = self._known[text] = estimate_text(text)
        return known


def estimate_message(
    message: Message, count_text: Callable[[str | None], int] = estimate_text
) -> int:
    """Raw estimate of one message as a provider receives it."""
    count = MESSAGE_OVERHEAD + count_text(message.content)
    for call in message.tool_calls:
        count += MESSAGE_OVERHEAD + count_text(call.name) + count_text(call.arguments_json())
    return count


def estimate_request(
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    count_text: Callable[[str | None], int] = estimate_text,
) -> int:
    """Raw estimate of a request: its messages and its tool schemas."""
    count = REQUEST_OVERHEAD + sum(estimate_message(m, count_text) for m in messages)
    if tools:
        count += count_text(json.dumps(list(tools), ensure_ascii=False))
    return count


@dataclass
class Ledger:
    """One chat's token accounting: the learned ratio and the last request's counts."""

    ratio: float = 1.0  # provider tokens per raw estimated token, from the last usage
    last_input: int | None = None
    last_output: int | None = None
    last_cached: int | None = None  # of last_input, read from the provider's prompt cache
    last_estimate: int | None = None  # what the last request was estimated at, scaled
    last_raw: int = 0  # the same, unscaled
    requests: int = 0
    # The provider's count of the last request and its answer, and the raw estimate of the
    # same: what is sent next is that count plus the estimate of what changed since.
    anchor_tokens: int | None = None
    anchor_raw: int = 0
    counts: TextCounts = field(default_factory=TextCounts, repr=False)

    def scaled(self, raw: int) -> int:
        """A raw estimate in the provider's tokens."""
        return int(round(raw * self.ratio))

    def tokens(self, raw: int) -> int:
        """The provider's tokens of a request whose raw estimate is `raw`: the provider's last
        count, moved by the estimate of what was added (or pruned, compacted, rewound) since;
        the scaled estimate before any count."""
        if self.anchor_tokens is None:
            return self.scaled(raw)
        return max(0, self.anchor_tokens + self.scaled(raw - self.anchor_raw))

    def raw(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
        """The raw estimate of a request, counting each text once."""
        return estimate_request(messages, tools, self.counts)

    def sent(self, raw: int) -> None:
        """A request estimated at `raw` (unscaled) is leaving."""
        self.last_estimate = self.tokens(raw)
        self.last_raw = raw

    def observe(
        self, prompt_tokens: int | None, completion_tokens: int | None, answer_raw: int = 0
    ) -> None:
        """The provider reported the last request's usage (`answer_raw`: the raw estimate of
        its answer): learn the ratio from it, and count from it from now on."""
        self.requests += 1
        self.last_output = completion_tokens
        if prompt_tokens is None or prompt_tokens <= 0:
            self.last_input = self.last_estimate
            return
        self.last_input = prompt_tokens
        if self.last_raw > 0:
            # Bounded: one odd report (cached tokens left out, say) must not wreck the meter.
            self.ratio = _bounded(prompt_tokens / self.last_raw)
        output = completion_tokens if completion_tokens is not None else self.scaled(answer_raw)
        self.anchor_tokens = prompt_tokens + output
        self.anchor_raw = self.last_raw + answer_raw

    def forget(self) -> None:
        """A new conversation (the chat was cleared): no last request to show. The provider's
        last count stays the base of the estimates (the system prompt and tools are sent
        again; what went is taken off by its estimate)."""
        self.last_input = self.last_output = self.last_estimate = self.last_cached = None

    def refused(self, prompt_tokens: int) -> None:
        """The provider refused the request as holding `prompt_tokens` (or at least that many)."""
        if self.last_raw > 0 and prompt_tokens > 0:
            self.ratio = _bounded(prompt_tokens / self.last_raw)


def _bounded(ratio: float) -> float:
    return min(4.0, max(0.25, ratio))
