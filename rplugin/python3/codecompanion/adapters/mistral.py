"""Mistral La Plateforme: OpenAI-compatible, but call ids must be 9 letters or digits."""

from __future__ import annotations

import hashlib
import re
from typing import ClassVar

from .openai import OpenAIAdapter

_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def mistral_call_id(call_id: str) -> str:
    """A stable 9-character id for any call id (Mistral rejects other forms)."""
    if _MISTRAL_ID.fullmatch(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    chars = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(chars)


class MistralAdapter(OpenAIAdapter):
    """Mistral models; ids from other providers are mapped so a switched chat still works."""

    label: ClassVar[str] = "Mistral"
    default_url: ClassVar[str | None] = "https://api.mistral.ai/v1"
    default_model: ClassVar[str | None] = "mistral-medium-latest"
    default_api_key: ClassVar[str | None] = "env:MISTRAL_API_KEY"
    stream_usage: ClassVar[bool] = False

    def wire_id(self, call_id: str) -> str:
        """Call ids in Mistral's 9-character form."""
        return mistral_call_id(call_id)
