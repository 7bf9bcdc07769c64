"""GitHub Models: OpenAI-compatible inference with a GitHub token."""

from __future__ import annotations

from typing import Any, ClassVar

from .openai import OpenAIAdapter


class GitHubModelsAdapter(OpenAIAdapter):
    """Models at models.github.ai; the key is a GitHub token with the `models` scope."""

    label: ClassVar[str] = "GitHub Models"
    default_url: ClassVar[str | None] = "https://models.github.ai/inference"
    default_model: ClassVar[str | None] = "openai/gpt-4.1"
    default_api_key: ClassVar[str | None] = "env:GITHUB_TOKEN"

    def models_url(self, base: str) -> str:
        """The catalog sits beside the inference endpoint."""
        if base.endswith("/inference"):
            return base[: -len("/inference")] + "/catalog/models"
        return base + "/catalog/models"

    def parse_models(self, data: Any) -> list[str]:
        """The catalog is a JSON list of models."""
        items = data if isinstance(data, list) else data.get("data", [])
        return sorted(str(m["id"]) for m in items if isinstance(m, dict) and "id" in m)
