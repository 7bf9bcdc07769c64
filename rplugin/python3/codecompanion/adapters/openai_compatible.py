"""Any server that speaks OpenAI Chat Completions: set `url`, and `api_key`/`model` if needed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from ..budget.windows import llama_props_window
from ..errors import AuthenticationError, ModelNotFoundError
from ..messages import Message
from .base import Event
from .http_adapter import RequestSpec
from .openai import OpenAIAdapter


class OpenAICompatibleAdapter(OpenAIAdapter):
    """llama.cpp, vLLM, LM Studio, LiteLLM and friends at a configured base URL."""

    label: ClassVar[str] = "The OpenAI-compatible server"
    default_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    default_api_key: ClassVar[str | None] = None
    key_required: ClassVar[bool] = False

    async def context_window(self, model: str) -> int | None:
        """llama.cpp's window from `/props` at the server's root (other servers have none: they
        answer 404 or 401). A failure to reach the server is raised: it is asked again."""
        base, headers = await self.connection()
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        try:
            response = await self._send("GET", root + "/props", headers, None, {}, None)
        except (ModelNotFoundError, AuthenticationError):
            return None
        return llama_props_window(await self.read_json(response))

    def stream_constrained(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any],
    ) -> AsyncIterator[Event]:
        """The request with its answer held to `schema` (`response_format`: llama.cpp turns it
        into a grammar, vLLM into guided decoding); a server that cannot refuses it."""
        return self.stream(messages, tools, schema)

    def constrain(self, spec: RequestSpec, schema: dict[str, Any]) -> None:
        """`response_format` of type json_schema (the messages and tools stay as they are, so a
        server's prompt cache still holds the request's prefix)."""
        spec.body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "tool_call", "schema": schema},
        }
