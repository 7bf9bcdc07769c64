"""What the providers' HTTP clients share: timeouts, header lookup, the response and the failures.

Two clients speak this: `fast_http.FastClient` (plain sockets, the usual case) and
`proxied_http.ProxiedClient` (httpx, only when the environment names a proxy), so httpx and
its imports stay out of a host that never needs them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Protocol


class HTTPFailure(Exception):
    """A request failed below HTTP: connecting, sending or reading."""


class ConnectFailed(HTTPFailure):
    """No connection to the server (refused, unknown host, TLS refused)."""


class TimedOut(HTTPFailure):
    """The server took longer than the timeout for a step."""


class ConnectTimedOut(TimedOut, ConnectFailed):
    """Connecting took longer than the connect timeout."""


class PeerBroke(HTTPFailure):
    """The server closed the connection early or sent something that is not HTTP/1.1."""


class NotHTTP(PeerBroke):
    """The server's bytes are not a valid HTTP/1.1 response (or exceed what is read of one)."""


class IOFailure(HTTPFailure):
    """The socket failed while sending or reading."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds allowed to connect and for each send or read (None: no limit)."""

    connect: float | None
    read: float | None
    write: float | None


class HeaderLookup(Protocol):
    """Case-insensitive header access, as both clients' responses offer it."""

    def get(self, key: str, default: str | None = None) -> str | None:
        """The header's value, or `default`."""


class Headers:
    """Response headers from the wire, looked up without regard to case."""

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        self._values: dict[str, str] = {}
        for name, value in raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            # Repeated fields read as one, comma-joined (RFC 9110 §5.3).
            self._values[key] = self._values[key] + ", " + text if key in self._values else text

    def get(self, key: str, default: str | None = None) -> str | None:
        """The header's value, or `default`."""
        return self._values.get(key.lower(), default)


class HTTPResponse(Protocol):
    """A response whose body is still on the wire: read it with `aiter_raw`, then `aclose`."""

    @property
    def status_code(self) -> int:
        """The HTTP status."""

    @property
    def headers(self) -> HeaderLookup:
        """The response headers."""

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (still compressed when the server compressed it)."""

    async def aclose(self) -> None:
        """Release the connection (kept for reuse when the body was read whole)."""


class HTTPClient(Protocol):
    """Sends one request and returns its response with the body unread."""

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        timeouts: Timeouts,
    ) -> HTTPResponse:
        """Send and return once the response head arrived; raises HTTPFailure."""

    async def aclose(self) -> None:
        """Close every kept connection."""
