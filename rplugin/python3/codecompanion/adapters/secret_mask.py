"""The secrets an adapter sends (keys, credential headers), masked wherever it quotes a provider."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import AdapterError
from .keys import KeyResolver

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key"}
)
# Custom headers whose name says they carry a credential.
_SECRET_NAME = re.compile(r"(?i)auth|key|token|secret|password|cookie|signature|session")
_SHORTEST = 8  # masking a shorter value would mangle ordinary words


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
        """`text` with every secret replaced by ***."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def redacted(self, exc: AdapterError) -> AdapterError:
        """`exc`, or a copy of it with every secret masked."""
        text = str(exc)
        clean = self.redact(text)
        if clean == text:
            return exc
        masked = copy.copy(exc)
        masked.args = (clean,)
        return masked
