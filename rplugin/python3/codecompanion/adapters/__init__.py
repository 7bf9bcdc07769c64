"""Provider adapters, one module per provider, named as the user configures it.

`create_adapter(settings)` builds the adapter named by `settings.name`; every adapter streams
normalized events (see `base.py`) and owns one pooled HTTP client.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .base import AdapterSettings
from .catalog import PROVIDERS, AdapterTable
from .keys import KeyResolver

if TYPE_CHECKING:
    # Only named here: importing it would load streams/, which needs this package's events.
    from ..transport.http_types import HTTPClient
    from .http_adapter import HTTPAdapter

__all__ = [
    "ADAPTERS",
    "PROVIDERS",
    "KeyResolver",
    "create_adapter",
    "default_adapter_name",
    "key_problem",
]

# Each provider's module is imported when its adapter is first looked up.
ADAPTERS: Mapping[str, type[HTTPAdapter]] = AdapterTable()

_KEY_VARIABLES = (
    ("OPENAI_API_KEY", "openai"),
    ("ANTHROPIC_API_KEY", "anthropic"),
    ("GEMINI_API_KEY", "gemini"),
)


def create_adapter(
    settings: AdapterSettings,
    *,
    key_resolver: KeyResolver | None = None,
    http_client: HTTPClient | None = None,
    ssl_context: ssl.SSLContext | None = None,
    extra: Mapping[str, type[HTTPAdapter]] | None = None,
) -> HTTPAdapter:
    """The adapter named by `settings.name` (a builtin, else one of `extra`, from plugins);
    ConfigError for an unknown name or missing url."""
    adapter_class = ADAPTERS.get(settings.name) or (extra or {}).get(settings.name)
    if adapter_class is None:
        known = ", ".join(sorted({*ADAPTERS, *(extra or {})}))
        raise ConfigError(f"unknown adapter {settings.name!r}: use one of {known}")
    return adapter_class(
        settings, key_resolver=key_resolver, http_client=http_client, ssl_context=ssl_context
    )


def default_adapter_name(env: Mapping[str, str]) -> str | None:
    """The provider whose API key is in the environment (OpenAI, Anthropic, Gemini), if any."""
    for variable, name in _KEY_VARIABLES:
        if env.get(variable, "").strip():
            return name
    return None


def key_problem(
    keys: KeyResolver,
    spec: str | None,
    adapter: str,
    plugins: Mapping[str, type[HTTPAdapter]] | None = None,
) -> str | None:
    """Why `adapter` would get no key from `spec` (or its usual key), without running anything.

    `plugins` are the adapters installed packages provide, beside the builtin ones.
    """
    if spec is None:
        adapter_class = ADAPTERS.get(adapter) or (plugins or {}).get(adapter)
        if adapter_class is None:
            return f"unknown adapter {adapter!r}"
        spec = adapter_class.default_api_key
        if spec is None:
            if adapter_class.key_required:
                return f"no API key: set api_key in the {adapter} adapter settings"
            return None
    return keys.problem(spec)
