"""What a request costs: list prices per model, overridable by the user.

Prices are USD per million tokens (input, output), the providers' published list prices when
this table was last updated; a model missing here has no cost shown unless the user sets one
(`price = {"input": 3.0, "output": 15.0}` on the adapter, or `opts["context"]["prices"]`).
Input read from a provider's prompt cache is priced at `cached_input` (and Anthropic's cache
writes at `cache_write`): the user's, else the family's published share of the input price.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Model-name prefix (lower case) → (input, output) USD per million tokens; longest prefix wins.
KNOWN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-haiku-4": (1.00, 5.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "deepseek-chat": (0.28, 0.42),
    "deepseek-reasoner": (0.28, 0.42),
    "mistral-large": (2.00, 6.00),
    "mistral-small": (0.10, 0.30),
    "codestral": (0.30, 0.90),
    "grok-4": (3.00, 15.00),
    "grok-code-fast": (0.20, 1.50),
    "grok-3-mini": (0.30, 0.50),
}

# Model-name prefix → (cached read, cache write) as shares of the input price; longest prefix
# wins; a model missing here pays the full input price for cached tokens.
CACHE_SHARES: dict[str, tuple[float, float]] = {
    "claude": (0.1, 1.25),
    "gpt-5": (0.1, 1.0),
    "gpt-4.1": (0.25, 1.0),
    "gpt-4o": (0.5, 1.0),
    "o3": (0.25, 1.0),
    "o4-mini": (0.25, 1.0),
    "gemini-2.5": (0.25, 1.0),
    "deepseek": (0.1, 1.0),
    "grok": (0.25, 1.0),
}


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens, and cached input (read, written)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(
        self, input_tokens: int, output_tokens: int, cached: int = 0, written: int = 0
    ) -> float:
        """The cost of one request in USD; `cached` and `written` are part of `input_tokens`."""
        read_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        plain = max(0, input_tokens - cached - written)
        total = plain * self.input + cached * read_price + written * write_price
        return (total + output_tokens * self.output) / 1_000_000


def price_for(
    model: str | None, extra: Mapping[str, Any], by_model: Mapping[str, Any]
) -> Price | None:
    """The user's price for this adapter or model, else the table's, else None."""
    for setting in (extra.get("price"), by_model.get(model) if model else None):
        price = _price(setting)
        if price is not None:
            return price
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in KNOWN_PRICES if name.startswith(p)), key=len, default=None)
    if best is None:
        return None
    price = Price(*KNOWN_PRICES[best])
    family = max((p for p in CACHE_SHARES if name.startswith(p)), key=len, default=None)
    if family is None:
        return price
    read, write = CACHE_SHARES[family]
    return Price(price.input, price.output, price.input * read, price.input * write)


def _price(value: Any) -> Price | None:
    if not isinstance(value, Mapping):
        return None
    rates = [value.get(k) for k in ("input", "output", "cached_input", "cache_write")]
    floats = [float(n) if isinstance(n, (int, float)) and _is_rate(n) else None for n in rates]
    if floats[0] is None or floats[1] is None:
        return None
    return Price(floats[0], floats[1], floats[2], floats[3])


def _is_rate(n: Any) -> bool:
    return isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0
