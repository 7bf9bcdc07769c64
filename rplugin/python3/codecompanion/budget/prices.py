"""What a request costs: list prices per model, overridable by the user.

Prices are USD per million tokens (input, output), the providers' published list prices when
this table was last updated; a model missing here has no cost shown unless the user sets one
(`price = {"input": 3.0, "output": 15.0}` on the adapter, or `opts["context"]["prices"]`).
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


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost of one request in USD."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


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
    return Price(*KNOWN_PRICES[best]) if best else None


def _price(value: Any) -> Price | None:
    if not isinstance(value, Mapping):
        return None
    numbers = [value.get("input"), value.get("output")]
    if all(isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0 for n in numbers):
        return Price(float(numbers[0]), float(numbers[1]))  # type: ignore[arg-type]
    return None
