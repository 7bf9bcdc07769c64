"""GitHub Copilot chat: the user's Copilot sign-in is exchanged for short-lived API tokens.

The GitHub OAuth token that copilot.vim / copilot.lua saved (`apps.json` or `hosts.json` in
`~/.config/github-copilot`, or `settings.extra["config_dir"]`) is sent to the token endpoint
(`settings.extra["token_url"]`); the answer is a Copilot API token with an expiry and the API
URL to use. The token is refreshed a minute before it expires. `api_key`, when set, replaces
the file lookup and is the GitHub OAuth token itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import AdapterError, AuthenticationError, ModelNotFoundError, ProviderError
from .openai import OpenAIAdapter, OpenAIParser

TOKEN_URL = "https://api.github.com/copilot_internal/v2/token"
DEFAULT_API = "https://api.githubcopilot.com"
REFRESH_MARGIN = 60.0
QUOTA_EXCEEDED = (
    "GitHub Copilot: quota exceeded (your plan's requests for this model are used up): "
    "pick a model your plan includes with `ga`, wait for the monthly reset, or raise your "
    "premium-request budget in GitHub's Copilot settings"
)
CLIENT_HEADERS = {
    "Copilot-Integration-Id": "vscode-chat",
    "Editor-Version": "Neovim/0.11.0",
    "Editor-Plugin-Version": "codecompanion.py/0.1.0",
    "User-Agent": "codecompanion.py/0.1.0",
}


@dataclass(frozen=True)
class CopilotToken:
    """A Copilot API token, when it expires (epoch seconds), and the API URL it is for."""

    token: str
    expires_at: float
    api_url: str | None = None

    def fresh(self, now: float) -> bool:
        """Whether the token is good for at least another minute."""
        return now < self.expires_at - REFRESH_MARGIN


def default_config_dir() -> Path:
    """Where copilot.vim and copilot.lua keep the sign-in."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "github-copilot"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "github-copilot"


def read_oauth_token(config_dir: Path) -> str | None:
    """The GitHub OAuth token from apps.json, else hosts.json; None if neither has one."""
    for name in ("apps.json", "hosts.json"):
        try:
            data = json.loads((config_dir / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        for host, entry in data.items():
            if host.startswith("github.com") and isinstance(entry, dict):
                token = entry.get("oauth_token")
                if isinstance(token, str) and token:
                    return token
    return None


class CopilotParser(OpenAIParser):
    """Chat Completions bodies; Copilot's plain-text `quota exceeded` answer is named."""

    def text_error(self, text: str) -> AdapterError:
        """Copilot answers 200 with the text `quota exceeded` once the plan's quota is used."""
        if "quota" in text.lower():
            return ProviderError(QUOTA_EXCEEDED)
        return super().text_error(text)


class CopilotAdapter(OpenAIAdapter):
    """Chat Completions at the Copilot API, with token exchange and refresh."""

    label: ClassVar[str] = "GitHub Copilot"
    default_url: ClassVar[str | None] = DEFAULT_API
    default_model: ClassVar[str | None] = "gpt-4.1"
    default_api_key: ClassVar[str | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token: CopilotToken | None = None
        self._lock: asyncio.Lock | None = None

    def new_parser(self) -> CopilotParser:
        """A Copilot parser sharing this adapter's id generator."""
        return CopilotParser(self.label, self.ids)

    def key_hint(self) -> str:
        """Copilot has no API key: the sign-in is what to check."""
        return "your Copilot sign-in (:Copilot auth) and subscription"

    async def oauth_token(self) -> str:
        """The user's GitHub OAuth token for Copilot."""
        if self.settings.api_key:
            key = await self.api_key()
            if key:
                return key
        directory = Path(self.settings.extra.get("config_dir") or default_config_dir())
        token = await asyncio.to_thread(read_oauth_token, directory)
        if not token:
            raise AuthenticationError(
                f"GitHub Copilot: no sign-in found in {directory}: "
                "sign in with copilot.vim or copilot.lua (:Copilot auth)"
            )
        self._remember(token)
        return token

    async def copilot_token(self) -> CopilotToken:
        """A fresh Copilot API token, exchanged again when the current one is about to expire."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._token is None or not self._token.fresh(time.time()):
                self._token = await self._exchange()
            return self._token

    async def _exchange(self) -> CopilotToken:
        oauth = await self.oauth_token()
        url = str(self.settings.extra.get("token_url") or TOKEN_URL)
        headers = {"Authorization": f"token {oauth}", "Accept": "application/json"}
        headers.update(CLIENT_HEADERS)
        try:
            response = await self._send("GET", url, headers, None, {}, None)
        except (AuthenticationError, ModelNotFoundError):
            raise AuthenticationError(
                "GitHub Copilot: GitHub refused the Copilot sign-in: sign in again "
                "(:Copilot auth) and check the Copilot subscription"
            ) from None
        data = await self.read_json(response)
        if not isinstance(data, dict) or not isinstance(data.get("token"), str):
            raise AuthenticationError("GitHub Copilot: the token endpoint sent no token")
        self._remember(data["token"])
        now = time.time()
        expires = data.get("expires_at")
        if not isinstance(expires, (int, float)):
            expires = now + float(data.get("refresh_in") or 600)
        api = (data.get("endpoints") or {}).get("api")
        return CopilotToken(data["token"], float(expires), api if isinstance(api, str) else None)

    async def connection(self) -> tuple[str, dict[str, str]]:
        """The token's API URL (unless `url` is set) and Copilot's headers."""
        token = await self.copilot_token()
        base = (self.settings.url or token.api_url or DEFAULT_API).rstrip("/")
        headers = {"Accept": "application/json", "Authorization": f"Bearer {token.token}"}
        headers.update(CLIENT_HEADERS)
        headers.update(self.settings.headers)
        return base, headers

    def _status_error(
        self, status: int, detail: str, model: str | None, url: str, retries: int
    ) -> AdapterError:
        """A refusal whose text is Copilot's quota message says so and what to do."""
        if "quota" in detail.lower() and status in (402, 403, 429):
            return ProviderError(QUOTA_EXCEEDED)
        return super()._status_error(status, detail, model, url, retries)

    def parse_models(self, data: Any) -> list[str]:
        """Chat models offered in Copilot's model picker."""
        names = set()
        for model in data.get("data", []):
            capabilities = model.get("capabilities") or {}
            if capabilities.get("type", "chat") != "chat":
                continue
            if model.get("model_picker_enabled") is False:
                continue
            names.add(str(model["id"]))
        return sorted(names)
