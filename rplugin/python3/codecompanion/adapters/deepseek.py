"""DeepSeek: OpenAI-compatible, with the model's reasoning in `reasoning_content`."""

from __future__ import annotations

from typing import ClassVar

from .openai import OpenAIAdapter


class DeepSeekAdapter(OpenAIAdapter):
    """DeepSeek chat and reasoner models.

    Reasoning is sent back only for the answers of the current turn, which DeepSeek's
    thinking mode needs while it is calling tools; older turns leave it out.
    """

    takes_images: ClassVar[bool] = False  # its API takes no image parts here

    label: ClassVar[str] = "DeepSeek"
    default_url: ClassVar[str | None] = "https://api.deepseek.com"
    default_model: ClassVar[str | None] = "deepseek-chat"
    default_api_key: ClassVar[str | None] = "env:DEEPSEEK_API_KEY"
    reasoning_field: ClassVar[str | None] = "reasoning_content"
