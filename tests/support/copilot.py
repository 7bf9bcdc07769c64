"""A Copilot adapter against the loopback server: its sign-in and token turns."""

from __future__ import annotations

import json
import time
from pathlib import Path

from codecompanion.adapters.http_adapter import HTTPAdapter
from codecompanion.loopback.server import LoopbackServer, Turn
from tests.support.adapters import AdapterFactory


def sign_in(directory: Path, name: str = "apps.json", token: str = "ghu_oauth") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    key = "github.com:Iv1.abc" if name == "apps.json" else "github.com"
    (directory / name).write_text(json.dumps({key: {"user": "me", "oauth_token": token}}))
    return directory


def token_turn(server: LoopbackServer, token: str, expires_in: float) -> Turn:
    return Turn.json(
        {
            "token": token,
            "expires_at": int(time.time() + expires_in),
            "refresh_in": 1500,
            "endpoints": {"api": server.url + "/api"},
        }
    )


def copilot(make_adapter: AdapterFactory, server: LoopbackServer, config_dir: Path) -> HTTPAdapter:
    return make_adapter(
        "copilot",
        url=None,
        api_key=None,
        extra={
            "config_dir": str(config_dir),
            "token_url": server.url + "/copilot_internal/v2/token",
        },
    )
