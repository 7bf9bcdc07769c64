"""The host's one TLS context: the CAs the user's machine trusts, built once, off the loop.

`SSL_CERT_FILE`/`SSL_CERT_DIR` win when set (as for OpenSSL and httpx). Otherwise the system's
store: on macOS and Windows through truststore (the keychain or certificate store, asked by the
platform at each handshake); on Linux the distribution's bundle (where `update-ca-certificates`
puts corporate CAs), loaded once here. truststore is not used on Linux because it reloads that
bundle at every new connection, on the event loop. certifi only where the system has no store at
all (a bare container).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TlsTrust:
    """A TLS context and, for :checkhealth and logs, where its CAs come from."""

    context: ssl.SSLContext
    source: str


def build_trust(env: Mapping[str, str]) -> TlsTrust:
    """The context for every HTTPS connection of the host (adapters, fetches, MCP servers)."""
    cafile = env.get("SSL_CERT_FILE", "").strip() or None
    capath = env.get("SSL_CERT_DIR", "").strip() or None
    if cafile or capath:
        names = " and ".join(
            name for name, value in (("SSL_CERT_FILE", cafile), ("SSL_CERT_DIR", capath)) if value
        )
        return TlsTrust(ssl.create_default_context(cafile=cafile, capath=capath), names)
    if sys.platform in ("darwin", "win32"):
        try:
            import truststore
        except ImportError:
            pass
        else:
            return TlsTrust(truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT), "system store")
    elif _system_store():
        return TlsTrust(ssl.create_default_context(), "system store")
    import certifi

    return TlsTrust(ssl.create_default_context(cafile=certifi.where()), "certifi")


class LazyContext:
    """A TLS context made on first use in a worker thread (loading CAs takes tens of ms)."""

    def __init__(self, build: Callable[[], ssl.SSLContext]) -> None:
        self._build = build
        self._context: ssl.SSLContext | None = None
        self._lock = asyncio.Lock()  # calls run at once wait for the one build

    async def get(self) -> ssl.SSLContext:
        """The context, built by the first caller off the event loop and kept."""
        if self._context is None:
            async with self._lock:
                if self._context is None:
                    self._context = await asyncio.to_thread(self._build)
        return self._context


def _system_store() -> bool:
    """Whether OpenSSL's default locations hold CAs (a bare container may have none)."""
    paths = ssl.get_default_verify_paths()
    if paths.cafile and os.path.isfile(paths.cafile):
        return True
    return bool(paths.capath and os.path.isdir(paths.capath) and os.listdir(paths.capath))
