"""xAI (Grok): OpenAI-compatible Chat Completions."""

from __future__ import annotations

from typing import ClassVar

from .openai import OpenAIAdapter


class XAIAdapter(OpenAIAdapter):
    """Grok models at api.x.ai."""

    label: ClassVar[str] = "xAI"
    default_url: ClassVar[str | None] = "https://api.x.ai/v1"
    default_model: ClassVar[str | None] = "grok-4"
    default_api_key: ClassVar[str | None] = "env:XAI_API_KEY"
