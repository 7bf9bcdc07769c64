"""What a chat driven by an agent shows where other chats name their adapter: the agent's
name and the model it says it uses. It streams nothing itself: the agent answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from ..adapters.base import AdapterSettings, Event
from ..errors import AdapterError
from ..messages import Message


class AgentAdapter:
    """The `ChatAdapter` face of an agent chat."""

    takes_images = False

    def __init__(
        self,
        name: str,
        models: Callable[[], list[str]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self.name = name
        self.settings = AdapterSettings(name=name)
        self._models = models
        self._close = close

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        """Never called for an agent chat (its driver prompts the agent)."""
        raise AdapterError(f"{self.name} is an external agent: it is prompted, not streamed")
        yield  # pragma: no cover - makes this an async generator

    async def list_models(self) -> list[str]:
        """The values of the agent's model option."""
        return self._models()

    async def aclose(self) -> None:
        """End the agent (the chat closed)."""
        await self._close()
