"""The adapter table, create_adapter, default_adapter_name, model listing and model choice."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.support.adapters import AdapterFactory, collect

from codecompanion.adapters import ADAPTERS, PROVIDERS, create_adapter, default_adapter_name
from codecompanion.adapters.base import AdapterSettings, ChatAdapter
from codecompanion.errors import ConfigError
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text

NAMES = [
    "openai",
    "openai_responses",
    "anthropic",
    "gemini",
    "gemini_interactions",
    "ollama",
    "openai_compatible",
    "deepseek",
    "mistral",
    "openrouter",
    "xai",
    "azure_openai",
    "githubmodels",
    "copilot",
]


def test_every_provider_is_registered_under_its_module_name() -> None:
    assert sorted(ADAPTERS) == sorted(NAMES)
    for name, adapter_class in ADAPTERS.items():
        assert adapter_class.__module__ == f"codecompanion.adapters.{name}"
    with pytest.raises(TypeError):
        ADAPTERS["x"] = ADAPTERS["openai"]  # type: ignore[index]


@pytest.mark.parametrize("name", NAMES)
def test_the_catalog_holds_each_class_s_own_defaults(name: str) -> None:
    provider, adapter_class = PROVIDERS[name], ADAPTERS[name]
    assert adapter_class.__name__ == provider.class_name
    assert provider.url == adapter_class.default_url
    assert provider.model == adapter_class.default_model
    assert provider.api_key == adapter_class.default_api_key


def test_only_the_adapter_asked_for_is_imported() -> None:
    code = (
        "import sys\n"
        "from codecompanion.adapters import ADAPTERS, create_adapter\n"
        "from codecompanion.adapters.base import AdapterSettings\n"
        "assert 'anthropic' in ADAPTERS and len(ADAPTERS) == 14\n"
        "create_adapter(AdapterSettings(name='ollama'))\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
        "             if m.startswith('codecompanion.adapters.') and m[23:] in ADAPTERS))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["['ollama']"], done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_create_adapter_gives_a_chat_adapter(name: str) -> None:
    adapter: ChatAdapter = create_adapter(
        AdapterSettings(name=name, url="http://localhost:1/v1", api_key="k")
    )
    assert adapter.name == name
    assert adapter.settings.api_key == "k"


def test_create_adapter_rejects_unknown_names_and_missing_urls() -> None:
    with pytest.raises(ConfigError, match="unknown adapter 'gpt': use one of anthropic, "):
        create_adapter(AdapterSettings(name="gpt"))
    with pytest.raises(ConfigError, match="adapter openai_compatible: set `url`"):
        create_adapter(AdapterSettings(name="openai_compatible"))


def test_default_adapter_name_from_the_environment() -> None:
    assert default_adapter_name({}) is None
    assert default_adapter_name({"OPENAI_API_KEY": " "}) is None
    assert default_adapter_name({"GEMINI_API_KEY": "g"}) == "gemini"
    assert default_adapter_name({"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"}) == "anthropic"
    assert default_adapter_name({"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"}) == "openai"


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("openai", "/models"),
        ("ollama", "/api/tags"),
        ("gemini", "/models"),
        ("anthropic", "/v1/models"),
    ],
)
async def test_list_models(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, name: str, path: str
) -> None:
    models = await make_adapter(name).list_models()
    assert models == sorted(provider_server.models)
    assert [(r.method, r.path) for r in provider_server.requests] == [("GET", path)]


async def test_github_models_catalog(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(
        Turn.json([{"id": "openai/gpt-4.1"}, {"id": "meta/llama"}]), method="GET"
    )
    adapter = make_adapter("githubmodels", url=provider_server.url + "/inference")
    assert await adapter.list_models() == ["meta/llama", "openai/gpt-4.1"]
    assert provider_server.requests[0].path == "/catalog/models"


async def test_azure_lists_its_deployment_without_a_request(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    assert await make_adapter("azure_openai", model="dep").list_models() == ["dep"]
    assert provider_server.requests == []


async def test_configured_model_needs_no_network_call(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.ndjson([{"message": {"content": "hi"}, "done": True}]))
    await collect(make_adapter("ollama", model="llama3"))
    (request,) = provider_server.requests
    assert (request.method, request.json()["model"]) == ("POST", "llama3")


async def test_without_a_model_the_first_listed_is_used_once(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.set_default(Turn.ndjson([{"message": {"content": "hi"}, "done": True}]))
    adapter = make_adapter("ollama", model=None)
    await collect(adapter)
    await collect(adapter)
    requests = [(r.method, r.path) for r in provider_server.requests]
    assert requests == [("GET", "/api/tags"), ("POST", "/api/chat"), ("POST", "/api/chat")]
    assert provider_server.requests[1].json()["model"] == "test-model"


async def test_generated_ids_stay_unique_across_answers(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    call = {"message": {"tool_calls": [{"function": {"name": "ls", "arguments": {}}}]}}
    provider_server.set_default(Turn.ndjson([call, call, {"done": True}]))
    adapter = make_adapter("ollama")
    first = await collect(adapter)
    second = await collect(adapter)
    ids = [e.call.id for e in first + second if hasattr(e, "call")]
    assert ids == ["call_1", "call_2", "call_3", "call_4"]


async def test_aclose_is_safe_and_a_new_client_follows(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.set_default(openai_text("hi"))
    adapter = make_adapter("openai")
    await collect(adapter)
    await adapter.aclose()
    await adapter.aclose()
    await collect(adapter)
    assert provider_server.connections == 2
