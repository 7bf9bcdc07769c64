"""One masker for every secret the plugin knows: adapter keys (literal, `env:`, `cmd:`),
credential headers, MCP servers' secret env and header values, the key variables of the
environment. They are collected in the host's KeyResolver (`known`): from the config as it is
loaded, and as keys are resolved; `mask` replaces each with `***` in whatever is shown, saved,
logged or sent: tool results, context, a provider's error, the log."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..errors import AdapterError
from .keys import KeyResolver

if TYPE_CHECKING:
    from ..context.sources import ContextItem
    from ..messages import ToolResult

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key"}
)
# Custom headers whose name says they carry a credential.
_SECRET_NAME = re.compile(r"(?i)auth|key|token|secret|password|cookie|signature|session")
_SHORTEST = 8  # masking a shorter value would mangle ordinary words


def mask(text: str, secrets: set[str]) -> str:
    """`text` with every one of `secrets` replaced by ***, longest first (a key that holds
    another is masked whole)."""
    if not text or not secrets:
        return text
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    return text


def masked_result(result: ToolResult, secrets: set[str]) -> ToolResult:
    """A tool's result with every secret masked in each of its texts."""
    texts = (result.for_llm, result.for_user, result.full_output, result.detail)
    if not secrets or not any(t and any(s in t for s in secrets) for t in texts):
        return result
    return replace(
        result,
        for_llm=mask(result.for_llm, secrets),
        for_user=None if result.for_user is None else mask(result.for_user, secrets),
        full_output=None if result.full_output is None else mask(result.full_output, secrets),
        detail=mask(result.detail, secrets),
    )


def masked_item(item: ContextItem, secrets: set[str]) -> ContextItem:
    """A piece of context with every secret masked in its lines."""
    if not secrets or not any(s in line for line in item.lines for s in secrets):
        return item
    return replace(item, lines=tuple(mask(line, secrets) for line in item.lines))


def is_secret_header(name: str) -> bool:
    """True for a header that carries a credential."""
    return name.lower() in SECRET_HEADERS or bool(_SECRET_NAME.search(name))


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers safe to log: credentials replaced by ***."""
    return {k: ("***" if is_secret_header(k) else v) for k, v in headers.items()}


@dataclass
class SecretMask:
    """One adapter's secrets; each is also given to the resolver, whose set the log masks."""

    keys: KeyResolver
    secrets: set[str] = field(default_factory=set)

    def remember(self, secret: str) -> None:
        """Mask `secret` (and each long word of it: "Bearer <token>" may be echoed in part)."""
        if len(secret) < _SHORTEST:
            return
        self.keys.remember(secret)
        self.secrets.add(secret)
        for word in secret.split():
            if len(word) >= _SHORTEST and word != secret:
                self.remember(word)

    def remember_headers(self, headers: Mapping[str, object]) -> None:
        """Mask the values of the credential headers among `headers`."""
        for name, value in headers.items():
            if is_secret_header(name) and isinstance(value, str):
                self.remember(value)

    def redact(self, text: str) -> str:
        """`text` with every secret the host knows replaced by *** (this adapter's first)."""
        return mask(text, self.secrets | self.keys.known)

    def redacted(self, exc: AdapterError) -> AdapterError:
        """`exc`, or a copy of it with every secret masked."""
        text = str(exc)
        clean = self.redact(text)
        if clean == text:
            return exc
        masked = copy.copy(exc)
        masked.args = (clean,)
        return masked
