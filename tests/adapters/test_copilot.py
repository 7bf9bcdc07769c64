"""GitHub Copilot: sign-in lookup, token exchange against the loopback server, refresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.adapters import AdapterFactory, collect
from tests.support.copilot import copilot, sign_in, token_turn

from codecompanion.adapters.copilot import read_oauth_token
from codecompanion.errors import AuthenticationError
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text


def test_oauth_token_from_apps_or_hosts(tmp_path: Path) -> None:
    assert read_oauth_token(sign_in(tmp_path / "a", "apps.json", "ghu_apps")) == "ghu_apps"
    assert read_oauth_token(sign_in(tmp_path / "h", "hosts.json", "ghu_hosts")) == "ghu_hosts"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "apps.json").write_text("{not json")
    assert read_oauth_token(tmp_path / "bad") is None
    assert read_oauth_token(tmp_path / "none") is None


async def test_exchange_then_chat_with_the_api_token(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, tmp_path: Path
) -> None:
    provider_server.enqueue(token_turn(provider_server, "tid=copilot-1", 3600), method="GET")
    provider_server.set_default(openai_text("hi"))
    adapter = copilot(make_adapter, provider_server, sign_in(tmp_path))
    await collect(adapter)
    await collect(adapter)
    exchange, chat, chat_again = provider_server.requests
    assert (exchange.method, exchange.path) == ("GET", "/copilot_internal/v2/token")
    assert exchange.headers["authorization"] == "token ghu_oauth"
    assert chat.path == "/api/chat/completions"
    assert chat.headers["authorization"] == "Bearer tid=copilot-1"
    assert chat.headers["copilot-integration-id"] == "vscode-chat"
    assert chat_again.headers["authorization"] == "Bearer tid=copilot-1"


async def test_token_is_refreshed_when_about_to_expire(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, tmp_path: Path
) -> None:
    provider_server.enqueue(
        token_turn(provider_server, "tid=old", 30),
        token_turn(provider_server, "tid=new", 3600),
        method="GET",
    )
    provider_server.set_default(openai_text("hi"))
    adapter = copilot(make_adapter, provider_server, sign_in(tmp_path))
    await collect(adapter)
    await collect(adapter)
    auth = [(r.method, r.headers["authorization"]) for r in provider_server.requests]
    assert auth == [
        ("GET", "token ghu_oauth"),
        ("POST", "Bearer tid=old"),
        ("GET", "token ghu_oauth"),
        ("POST", "Bearer tid=new"),
    ]


async def test_refused_sign_in_and_missing_sign_in(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, tmp_path: Path
) -> None:
    provider_server.enqueue(Turn.error(401, "Bad credentials"), method="GET")
    with pytest.raises(AuthenticationError, match="GitHub refused the Copilot sign-in"):
        await collect(copilot(make_adapter, provider_server, sign_in(tmp_path)))
    with pytest.raises(AuthenticationError, match="no sign-in found in .*:Copilot auth"):
        await collect(copilot(make_adapter, provider_server, tmp_path / "empty"))
    assert [r.method for r in provider_server.requests] == ["GET"]


async def test_copilot_models_are_the_chat_models(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, tmp_path: Path
) -> None:
    provider_server.enqueue(token_turn(provider_server, "tid=t", 3600), method="GET")
    provider_server.enqueue(
        Turn.json(
            {
                "data": [
                    {"id": "gpt-4.1", "capabilities": {"type": "chat"}},
                    {
                        "id": "claude-x",
                        "capabilities": {"type": "chat"},
                        "model_picker_enabled": True,
                    },
                    {"id": "embed", "capabilities": {"type": "embeddings"}},
                    {
                        "id": "hidden",
                        "capabilities": {"type": "chat"},
                        "model_picker_enabled": False,
                    },
                ]
            }
        ),
        method="GET",
    )
    models = await copilot(make_adapter, provider_server, sign_in(tmp_path)).list_models()
    assert models == ["claude-x", "gpt-4.1"]
    assert provider_server.requests[1].path == "/api/models"
