"""An example codecompanion plugin: a `@tool` function and an OpenAI-compatible adapter."""

from __future__ import annotations

from typing import ClassVar

from codecompanion.adapters.openai_compatible import OpenAICompatibleAdapter
from codecompanion.tools import tool


@tool
def word_count(text: str) -> str:
    """Count the words of a text.

    Args:
        text: The text whose words are counted.
    """
    return f"{len(text.split())} words"


class EchoAdapter(OpenAICompatibleAdapter):
    """A local OpenAI-compatible server, under its own adapter name."""

    label: ClassVar[str] = "Echo LLM"
    default_url: ClassVar[str | None] = "http://127.0.0.1:8089/v1"
    default_model: ClassVar[str | None] = "echo"
    key_required: ClassVar[bool] = False
