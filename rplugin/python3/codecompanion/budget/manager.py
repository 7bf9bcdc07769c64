"""One chat's context budget: its window, the meter, and making room before each request.

Before a request the chat asks `make_room`: past `prune_at` of the window old tool results are
pruned (oldest first, the last `keep_rounds` rounds kept whole); past `compact_at`, or when the
answer would not fit, results are pruned down to the latest round (cheaper than a summary) and
then the earlier conversation is compacted; what still does not fit is refused with one line.
After the answer, `observe` takes the provider's usage and corrects the estimates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..adapters.base import ChatAdapter, Usage
from ..errors import AdapterError
from ..messages import Message, MessageStore
from . import compact, prune
from .count import Ledger, estimate_message
from .prices import Price, price_for
from .windows import ServerWindows, configured_window, known_window

log = logging.getLogger("codecompanion.budget")

PROBE_TIMEOUT = 5.0  # seconds a server gets to say its window
Say = Callable[[str], None]
Summarise = Callable[[str], Awaitable[str]]


@dataclass
class BudgetOptions:
    """`opts["context"]`: thresholds as fractions of the window, and what compaction keeps."""

    prune_at: float = 0.75
    compact_at: float = 0.85
    keep_rounds: int = 2  # tool rounds never pruned by the first threshold
    keep_turns: int = 2  # turns a compaction keeps whole (the current one always)
    reserve: int | None = None  # tokens kept free for the answer (default: a fifth, ≤ 4096)
    prune: bool = True
    auto_compact: bool = True
    compact_adapter: str | None = None  # a cheaper adapter that writes the summaries
    windows: dict[str, int] = field(default_factory=dict)
    prices: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any] | None) -> BudgetOptions:
        """The options from a checked `opts["context"]` (unknown keys ignored)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (opts or {}).items() if k in known})


@dataclass(frozen=True)
class Meter:
    """What the chat shows: tokens in context / window, the last request, the cost so far."""

    tokens: int
    window: int | None
    last_input: int | None
    last_output: int | None
    cost: float | None
    last_cached: int | None = None  # of last_input, read from the provider's prompt cache

    def text(self) -> str:
        """One short line, e.g. `2.1k/4.1k tokens (52%) · last 1.9k in, 120 out · $0.0012`."""
        used = _k(self.tokens)
        head = f"{used}/{_k(self.window)} tokens" if self.window else f"{used} tokens"
        if self.window:
            head += f" ({round(100 * self.tokens / self.window)}%)"
        parts = [head]
        if self.last_input is not None or self.last_output is not None:
            cached = f" ({_k(self.last_cached)} cached)" if self.last_cached else ""
            last_in, last_out = _k(self.last_input or 0), _k(self.last_output or 0)
            parts.append(f"last {last_in} in{cached}, {last_out} out")
        if self.cost is not None:
            parts.append(f"${self.cost:.4f}")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The fields of `require("codecompanion").status()`."""
        return {
            "tokens": self.tokens,
            "window": self.window,
            "last_input": self.last_input,
            "last_output": self.last_output,
            "last_cached": self.last_cached,
            "cost": self.cost,
            "text": self.text(),
        }


def _k(n: int | None) -> str:
    if n is None:
        return "?"
    return str(n) if n < 1000 else f"{n / 1000:.1f}k"


class Budget:
    """One chat's accounting and its pruning and compaction policy."""

    def __init__(
        self, options: BudgetOptions | None = None, servers: ServerWindows | None = None
    ) -> None:
        self.options = options or BudgetOptions()
        self.ledger = Ledger()
        self.cost: float | None = None
        self.servers = servers or ServerWindows()
        self._windows: dict[tuple[str, str | None], int | None] = {}

    # ----- the window -------------------------------------------------------------------

    async def window(self, adapter: ChatAdapter) -> int | None:
        """The model's window (setting, server, table), asked of the server once per model
        and host (once per chat when the server could not be reached)."""
        model = adapter.settings.model
        set_by_user = configured_window(adapter.settings.extra, model, self.options.windows)
        if set_by_user is not None:
            return set_by_user
        key = (adapter.name, model)
        if key not in self._windows:
            asked, size = self.servers.known(adapter)
            if not asked:
                size, answered = await _probe(adapter, model)
                if answered:
                    self.servers.note(adapter, size)
            self._windows[key] = size or known_window(model)
        return self._windows[key]

    def known_window(self, adapter: ChatAdapter) -> int | None:
        """The window if already known (no I/O): for the meter."""
        model = adapter.settings.model
        set_by_user = configured_window(adapter.settings.extra, model, self.options.windows)
        return set_by_user or self._windows.get((adapter.name, model)) or known_window(model)

    def reserve(self, window: int) -> int:
        """Tokens kept free for the answer."""
        if self.options.reserve is not None:
            return self.options.reserve
        return min(4096, max(256, window // 5))

    # ----- what is sent and what it costs ---------------------------------------------------

    @staticmethod
    def as_sent(messages: Sequence[Message]) -> list[Message]:
        """The history as sent: compacted messages left out, pruned results as stubs."""
        return prune.as_sent(compact.as_sent(messages))

    def measure(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
        """The estimated input tokens of sending `messages` with `tools` now."""
        return self.ledger.tokens(self.ledger.raw(self.as_sent(messages), tools))

    def sending(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
        """A request is leaving: remember its estimate (to learn from its usage); returns it."""
        self.ledger.sent(self.ledger.raw(self.as_sent(messages), tools))
        return self.ledger.last_estimate or 0

    def observe(
        self, usage: Usage | None, adapter: ChatAdapter, answer: Message | None = None
    ) -> None:
        """The answer's usage (or none): correct the estimates and add the cost."""
        if usage is None:
            self.ledger.observe(None, None)
            return
        answer_raw = estimate_message(answer, self.ledger.counts) if answer is not None else 0
        self.ledger.observe(usage.prompt_tokens, usage.completion_tokens, answer_raw)
        self.ledger.last_cached = usage.cached_tokens
        price = self.price(adapter)
        if price is not None:
            spent = price.cost(
                usage.prompt_tokens or 0,
                usage.completion_tokens or 0,
                usage.cached_tokens or 0,
                usage.cache_write_tokens or 0,
            )
            self.cost = (self.cost or 0.0) + spent

    def price(self, adapter: ChatAdapter) -> Price | None:
        """The model's price, if known."""
        return price_for(adapter.settings.model, adapter.settings.extra, self.options.prices)

    def meter(
        self,
        adapter: ChatAdapter,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        tokens: int | None = None,
    ) -> Meter:
        """The meter's values now (`tokens`: the estimate of `messages`, when just counted)."""
        return Meter(
            tokens=self.measure(messages, tools) if tokens is None else tokens,
            window=self.known_window(adapter),
            last_input=self.ledger.last_input,
            last_output=self.ledger.last_output,
            cost=self.cost,
            last_cached=self.ledger.last_cached,
        )

    # ----- making room ------------------------------------------------------------------

    async def make_room(
        self,
        store: MessageStore,
        tools: Sequence[dict[str, Any]],
        window: int | None,
        summarise: Summarise,
        say: Say,
        force: bool = False,
        summary_budget: int = 2000,
        whole: bool = False,
    ) -> str | None:
        """Prune and compact until the request fits; None when it does, else why not.

        `force` compacts whatever the thresholds say (`/compact`, or a provider that refused);
        `whole` (`/compact` between turns) may summarise every turn when only one is left.
        """
        options = self.options

        def size() -> int:
            return self.measure(list(store), tools)

        async def compact_keeping(turns: int) -> None:
            await self.compact(store, turns, summarise, say, size, summary_budget, whole)

        if window is None:
            if force:
                await compact_keeping(options.keep_turns)
            return None
        fits = window - self.reserve(window)

        compact_over = min(options.compact_at * window, fits)
        if options.prune and size() > options.prune_at * window:
            self._prune(store, options.keep_rounds, options.prune_at * window, size, say)
        if options.prune and size() > compact_over:  # pruning costs less than a summary
            self._prune(store, 1, compact_over, size, say)
        if force or (options.auto_compact and size() > compact_over):
            await compact_keeping(options.keep_turns)
        if size() > fits and options.auto_compact:  # the last resort: only the current turn
            await compact_keeping(1)
        needed = size()
        if needed > fits:
            return (
                f"not sent: the request needs about {needed} tokens and the model's window is "
                f"{window} ({window - fits} kept for the answer); shorten the message or start "
                "a new chat"
            )
        return None

    @staticmethod
    def _prune(
        store: MessageStore, keep: int, target: float, size: Callable[[], int], say: Say
    ) -> None:
        before = size()
        count = prune.prune_oldest(list(store), keep, lambda: size() <= target)
        if count:
            noun = "result" if count == 1 else "results"
            say(f"pruned {count} old tool {noun} to stubs ({before} → {size()} tokens)")

    async def compact(
        self,
        store: MessageStore,
        keep_turns: int,
        summarise: Summarise,
        say: Say,
        size: Callable[[], int],
        budget: int = 2000,
        whole: bool = False,
    ) -> bool:
        """Summarise what comes before the last `keep_turns` turns; True when it did. `whole`
        (between turns, on demand) may summarise the last turn too when nothing is before it."""
        cut = compact.find_cut(list(store), keep_turns)
        if cut is None:
            if keep_turns > 1:
                return await self.compact(store, 1, summarise, say, size, budget, whole)
            if keep_turns == 1 and whole:
                return await self.compact(store, 0, summarise, say, size, budget)
            say("nothing to compact: only the current turn is left")
            return False
        before = size()
        span = list(store)[cut.start : cut.end]
        try:
            summary = await summarise(compact.transcript(span, budget))
        except AdapterError as exc:
            say(f"compaction failed: {exc}")
            return False
        except asyncio.TimeoutError:
            say("compaction failed: the summary took too long")
            return False
        raw_before = self.ledger.raw(self.as_sent(list(store)), [])
        placed = compact.apply(store, cut, summary)
        after = size()
        # Judged on the estimates alone: a provider's count moves the meter, not the text.
        if self.ledger.raw(self.as_sent(list(store)), []) >= raw_before:
            compact.undo(store, placed)
            say(
                f"nothing compacted: a summary of {cut.count} messages would not be shorter "
                f"({before} → {after} tokens)"
            )
            return False
        say(f"compacted {cut.count} earlier messages into a summary ({before} → {after} tokens)")
        return True

    # ----- saved with the chat ------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """What a restored chat needs to keep its meter."""
        ledger = self.ledger
        return {
            "ratio": ledger.ratio,
            "last_input": ledger.last_input,
            "last_output": ledger.last_output,
            "cost": self.cost,
            "anchor_tokens": ledger.anchor_tokens,
            "anchor_raw": ledger.anchor_raw,
        }

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Take back a saved `to_state`."""
        ratio = state.get("ratio")
        if isinstance(ratio, (int, float)) and 0.25 <= ratio <= 4.0:
            self.ledger.ratio = float(ratio)
        for name in ("last_input", "last_output", "anchor_tokens", "anchor_raw"):
            value = state.get(name)
            if isinstance(value, int):
                setattr(self.ledger, name, value)
        cost = state.get("cost")
        if isinstance(cost, (int, float)):
            self.cost = float(cost)


async def _probe(adapter: ChatAdapter, model: str | None) -> tuple[int | None, bool]:
    """The window the server reports, and whether it answered (a failure is asked again)."""
    probe = getattr(adapter, "context_window", None)
    if probe is None:
        return None, True
    try:
        size = await asyncio.wait_for(probe(model or ""), PROBE_TIMEOUT)
    except (AdapterError, asyncio.TimeoutError, OSError) as exc:
        log.debug("asking %s for its window failed: %s", adapter.name, exc)
        return None, False
    return (size if isinstance(size, int) and size > 0 else None), True
