"""The adapter interface: normalized stream events and the contract every provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message, ToolCall


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's visible text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning (thinking) text."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """One complete tool call, assembled however the provider fragmented it."""

    call: ToolCall


@dataclass(frozen=True)
class Usage:
    """Token counts the provider reported."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    # Of prompt_tokens: read from the provider's prompt cache, and written to it (each priced
    # apart where the provider does).
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class Finish:
    """The end of one response."""

    reason: str | None = None


@dataclass(frozen=True)
class ProviderState:
    """What the provider wants back with this answer's calls (thinking blocks, signatures).

    Saved with the answer's calls, so a restored chat can continue its tool loop.
    """

    data: dict[str, Any]


Event = TextDelta | ReasoningDelta | ToolCallEvent | Usage | Finish | ProviderState


@dataclass
class AdapterSettings:
    """What the user configures for one adapter (after defaults are merged)."""

    name: str
    url: str | None = None
    api_key: str | None = None
    model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    stream: bool = True
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 3
    retry_backoff: float = 1.0
    retry_max_wait: float = 30.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Warms(Protocol):
    """An adapter that can open its next request's connection ahead of time."""

    def warm(self) -> None:
        """Start opening the connection in the background (failures stay quiet)."""
        ...


@runtime_checkable
class ConstrainsAnswers(Protocol):
    """An adapter whose server can hold an answer to a JSON schema (a local server's grammar)."""

    def stream_constrained(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any],
    ) -> AsyncIterator[Event]:
        """`stream`'s request, its answer held to `schema`."""
        ...


class ChatAdapter(Protocol):
    """What the chat needs from a provider adapter."""

    name: str
    settings: AdapterSettings

    def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        """Send one request and yield its normalized events; raises AdapterError on failure."""
        ...

    async def list_models(self) -> list[str]:
        """The provider's model names (for the picker)."""
        ...

    async def aclose(self) -> None:
        """Close the pooled HTTP client."""
        ...
