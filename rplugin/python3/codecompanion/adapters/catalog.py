"""The builtin providers by name: where each adapter class lives and its defaults.

A host talks to one or two providers: the others' modules are imported only when asked for
(about 1 MB for all of them). The defaults are here too, so completion (default models), the
tools' environment scrub (key variables) and TLS (default URLs) need no import; a test keeps
them equal to the classes' own.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .http_adapter import HTTPAdapter
    from .keys import KeyResolver


@dataclass(frozen=True)
class Provider:
    """A builtin adapter: its class (in the module named like the provider) and defaults."""

    class_name: str
    url: str | None
    model: str | None
    api_key: str | None


_OPENAI = "https://api.openai.com/v1"
_GEMINI = "https://generativelanguage.googleapis.com/v1beta"

PROVIDERS: Mapping[str, Provider] = MappingProxyType(
    {
        "openai": Provider("OpenAIAdapter", _OPENAI, "gpt-4.1", "env:OPENAI_API_KEY"),
        "openai_responses": Provider(
            "OpenAIResponsesAdapter", _OPENAI, "gpt-5-mini", "env:OPENAI_API_KEY"
        ),
        "anthropic": Provider(
            "AnthropicAdapter",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            "env:ANTHROPIC_API_KEY",
        ),
        "gemini": Provider("GeminiAdapter", _GEMINI, "gemini-2.5-flash", "env:GEMINI_API_KEY"),
        "gemini_interactions": Provider(
            "GeminiInteractionsAdapter", _GEMINI, "gemini-2.5-flash", "env:GEMINI_API_KEY"
        ),
        "ollama": Provider("OllamaAdapter", "http://localhost:11434", None, None),
        "openai_compatible": Provider("OpenAICompatibleAdapter", None, None, None),
        "deepseek": Provider(
            "DeepSeekAdapter", "https://api.deepseek.com", "deepseek-chat", "env:DEEPSEEK_API_KEY"
        ),
        "mistral": Provider(
            "MistralAdapter",
            "https://api.mistral.ai/v1",
            "mistral-medium-latest",
            "env:MISTRAL_API_KEY",
        ),
        "openrouter": Provider(
            "OpenRouterAdapter",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4.1",
            "env:OPENROUTER_API_KEY",
        ),
        "xai": Provider("XAIAdapter", "https://api.x.ai/v1", "grok-4", "env:XAI_API_KEY"),
        "azure_openai": Provider("AzureOpenAIAdapter", None, None, "env:AZURE_OPENAI_API_KEY"),
        "githubmodels": Provider(
            "GitHubModelsAdapter",
            "https://models.github.ai/inference",
            "openai/gpt-4.1",
            "env:GITHUB_TOKEN",
        ),
        "copilot": Provider("CopilotAdapter", "https://api.githubcopilot.com", "gpt-4.1", None),
    }
)


class AdapterTable(Mapping[str, "type[HTTPAdapter]"]):
    """The builtin adapter classes by name, each imported on first lookup; read-only."""

    def __getitem__(self, name: str) -> type[HTTPAdapter]:
        provider = PROVIDERS[name]
        module = importlib.import_module(f"{__package__}.{name}")
        adapter_class: type[HTTPAdapter] = getattr(module, provider.class_name)
        return adapter_class

    def __iter__(self) -> Iterator[str]:
        return iter(PROVIDERS)

    def __len__(self) -> int:
        return len(PROVIDERS)

    def __contains__(self, name: object) -> bool:
        return name in PROVIDERS


def key_variables(
    adapters: Mapping[str, object], mcp: Mapping[str, object] | None = None
) -> list[str]:
    """The environment variables adapters and MCP servers read secrets from (`env:NAME`):
    adapters' keys (builtin and configured) and MCP servers' `env` and `headers` values."""
    specs: list[object] = [provider.api_key for provider in PROVIDERS.values()]
    for settings in adapters.values():
        if isinstance(settings, Mapping):
            specs.append(settings.get("api_key"))
            specs.extend(_values(settings.get("env")))
    servers = (mcp or {}).get("servers")
    for server in servers.values() if isinstance(servers, Mapping) else ():
        if isinstance(server, Mapping):
            specs.extend([*_values(server.get("env")), *_values(server.get("headers"))])
    names = {
        spec[4:].strip() for spec in specs if isinstance(spec, str) and spec.startswith("env:")
    }
    return sorted(name for name in names if name)


def _values(table: object) -> list[object]:
    """A config table's values ([] for anything but a table)."""
    return list(table.values()) if isinstance(table, Mapping) else []


def remember_config(
    keys: KeyResolver,
    adapters: Mapping[str, object],
    mcp: Mapping[str, object],
    env: Mapping[str, str],
) -> None:
    """Make `keys` mask every secret the config names now, before any is used: literal and
    `env:` keys and credential headers of adapters, the builtin adapters' key variables, and
    MCP servers' env and header values that are `env:` specs or have a credential's name
    (see secret_mask.py: the one masker)."""
    specs: list[object] = [provider.api_key for provider in PROVIDERS.values()]
    for settings in adapters.values():
        if isinstance(settings, Mapping):
            specs.append(settings.get("api_key"))
            specs += _secret_values(settings.get("headers"))
    servers = mcp.get("servers")
    for server in servers.values() if isinstance(servers, Mapping) else ():
        if isinstance(server, Mapping):
            specs += _secret_values(server.get("env")) + _secret_values(server.get("headers"))
    for spec in specs:
        value = _known_value(spec, env)
        if value:
            keys.remember(value)
            for word in value.split():  # "Bearer <token>" is often quoted in part
                keys.remember(word)


def _secret_values(table: object) -> list[object]:
    """The values of a table (env, headers) that are specs or whose name says credential."""
    from .secret_mask import is_secret_header

    if not isinstance(table, Mapping):
        return []
    return [
        value
        for name, value in table.items()
        if isinstance(value, str)
        and (value.startswith(("env:", "cmd:")) or is_secret_header(str(name)))
    ]


def _known_value(spec: object, env: Mapping[str, str]) -> str | None:
    """The secret a spec names when it can be known without running anything."""
    if not isinstance(spec, str) or spec.startswith("cmd:"):
        return None  # a command's key is remembered when it runs
    if spec.startswith("env:"):
        return env.get(spec[4:].strip(), "").strip() or None
    return spec.strip() or None
