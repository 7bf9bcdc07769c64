"""Each model's context window: the user's setting, what the server says, or a known table.

Order: the adapter's `context_windows[model]`, its `context_window`, `opts["context"]["windows"]`
by model, what the server reports (llama.cpp's `/props`, Ollama's `/api/show`), then the table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..outside import Json

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter

log = logging.getLogger("codecompanion.budget")

# Model-name prefixes (lower case) and their windows in tokens; the longest prefix wins.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    "claude-": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2": 1_048_576,
    "gemini-3": 1_048_576,
    "deepseek-": 128_000,
    "mistral-large": 131_072,
    "mistral-medium": 131_072,
    "mistral-small": 131_072,
    "codestral": 256_000,
    "devstral": 131_072,
    "grok-4": 256_000,
    "grok-code": 256_000,
    "grok-3": 131_072,
    "qwen2.5-coder": 32_768,
    "qwen3": 32_768,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
}


def known_window(model: str | None) -> int | None:
    """The table's window for `model` (a provider prefix such as `openai/` is ignored)."""
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in KNOWN_WINDOWS if name.startswith(p)), key=len, default=None)
    return KNOWN_WINDOWS[best] if best else None


def configured_window(
    extra: Mapping[str, Any], model: str | None, by_model: Mapping[str, Any]
) -> int | None:
    """The window the user set for this adapter and model, if any."""
    per_model = extra.get("context_windows")
    candidates = [
        per_model.get(model) if isinstance(per_model, Mapping) and model else None,
        extra.get("context_window"),
        by_model.get(model) if model else None,
    ]
    sizes: list[Any] = [c for c in candidates if _is_size(c)]
    return int(sizes[0]) if sizes else None


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def llama_props_window(data: Json) -> int | None:
    """The context size in llama.cpp's `/props` answer."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if _is_size(n_ctx) else None


def ollama_show_window(data: Json, options: Mapping[str, Any] | None = None) -> int | None:
    """The context Ollama runs the model with: `num_ctx` (the request's, else the Modelfile's),
    else the model's trained length from `/api/show`."""
    num_ctx: Any = (options or {}).get("num_ctx")
    if _is_size(num_ctx):
        return int(num_ctx)
    if not isinstance(data, dict):
        return None
    for line in str(data.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return int(parts[1])
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and _is_size(value):
                return int(value)
    return None


class ServerWindows:
    """What servers said of their models' windows, kept for every chat of the host: a new
    chat sends no extra request before its first. Keyed by adapter, URL and model."""

    def __init__(self) -> None:
        self._said: dict[tuple[str, str | None, str | None], int | None] = {}

    @staticmethod
    def key(adapter: ChatAdapter) -> tuple[str, str | None, str | None]:
        """Which server and model an adapter asks."""
        return (adapter.name, adapter.settings.url, adapter.settings.model)

    def known(self, adapter: ChatAdapter) -> tuple[bool, int | None]:
        """Whether the server was asked, and what it said (None: it reports no window)."""
        key = self.key(adapter)
        return key in self._said, self._said.get(key)

    def note(self, adapter: ChatAdapter, size: int | None) -> None:
        """Keep a server's answer."""
        self._said[self.key(adapter)] = size

    def clear(self) -> None:
        """Forget every answer (the config was reloaded: URLs and options may differ)."""
        self._said.clear()
