"""Azure OpenAI: a deployment of an OpenAI model on the user's Azure resource."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..messages import Message
from .http_adapter import RequestSpec
from .openai import OpenAIAdapter

DEFAULT_API_VERSION = "2024-10-21"


class AzureOpenAIAdapter(OpenAIAdapter):
    """`url` is the resource endpoint and `model` the deployment name.

    With an endpoint ending in `/openai/v1` the v1 API is used (model in the body); otherwise
    the deployment path and `api_version` (settings.extra, default 2024-10-21).
    """

    label: ClassVar[str] = "Azure OpenAI"
    default_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    default_api_key: ClassVar[str | None] = "env:AZURE_OPENAI_API_KEY"

    def auth_headers(self, key: str) -> dict[str, str]:
        """Azure takes the key in `api-key`."""
        return {"api-key": key}

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """A Chat Completions body for the deployment."""
        spec = super().build_request(messages, tools, model)
        if self.base_url.endswith("/v1"):
            return spec
        version = str(self.settings.extra.get("api_version", DEFAULT_API_VERSION))
        spec.path = f"/openai/deployments/{model}/chat/completions"
        spec.params = {"api-version": version}
        return spec

    async def list_models(self) -> list[str]:
        """The configured deployment (Azure lists deployments through its management API)."""
        model = self.settings.model
        return [model] if model else []
