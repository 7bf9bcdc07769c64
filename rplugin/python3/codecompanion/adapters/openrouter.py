"""OpenRouter: OpenAI-compatible; its `: OPENROUTER PROCESSING` keep-alive comments are skipped."""

from __future__ import annotations

from typing import ClassVar

from .openai import OpenAIAdapter


class OpenRouterAdapter(OpenAIAdapter):
    """Models of many vendors through openrouter.ai (reasoning arrives as `delta.reasoning`)."""

    label: ClassVar[str] = "OpenRouter"
    default_url: ClassVar[str | None] = "https://openrouter.ai/api/v1"
    default_model: ClassVar[str | None] = "openai/gpt-4.1"
    default_api_key: ClassVar[str | None] = "env:OPENROUTER_API_KEY"

    async def connection(self) -> tuple[str, dict[str, str]]:
        """OpenRouter's app attribution headers, unless the user set their own."""
        base, headers = await super().connection()
        headers.setdefault("X-Title", "codecompanion")
        return base, headers
