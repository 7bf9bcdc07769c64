"""Any server that speaks OpenAI Chat Completions: set `url`, and `api_key`/`model` if needed."""

from __future__ import annotations

from typing import ClassVar

from .openai import OpenAIAdapter


class OpenAICompatibleAdapter(OpenAIAdapter):
    """llama.cpp, vLLM, LM Studio, LiteLLM and friends at a configured base URL."""

    label: ClassVar[str] = "The OpenAI-compatible server"
    default_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    default_api_key: ClassVar[str | None] = None
    key_required: ClassVar[bool] = False
