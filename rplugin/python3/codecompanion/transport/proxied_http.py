"""Provider requests through a proxy from the environment, sent by httpx.

Imported only when `HTTP(S)_PROXY`/`ALL_PROXY` is set: httpx reads those variables (and
`NO_PROXY`) itself, and its import costs about 4 MB the usual direct connection does not need.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import httpx

from .http_types import ConnectFailed, ConnectTimedOut, HTTPFailure, PeerBroke, TimedOut, Timeouts


def _ours(exc: httpx.HTTPError) -> HTTPFailure:
    """The same failure in the providers' own terms."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectTimedOut(text)
    if isinstance(exc, httpx.TimeoutException):
        return TimedOut(text)
    if isinstance(exc, (httpx.ConnectError, httpx.ProxyError, httpx.UnsupportedProtocol)):
        return ConnectFailed(text)
    if isinstance(exc, httpx.RemoteProtocolError):
        return PeerBroke(text)
    return HTTPFailure(text)


class ProxiedResponse:
    """An httpx response seen through the providers' response interface."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status_code = response.status_code
        self.headers = response.headers

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent."""
        try:
            async for piece in self._response.aiter_raw():
                yield piece
        except httpx.HTTPError as exc:
            raise _ours(exc) from None

    async def aclose(self) -> None:
        """Release the connection."""
        await self._response.aclose()


class ProxiedClient:
    """httpx's client, which routes through the proxies the environment names."""

    def __init__(self, ssl_context: ssl.SSLContext | None, plain: bool) -> None:
        # Plain http has nothing to verify: no CA bundle is loaded (about 2 MB and 20 ms).
        verify: ssl.SSLContext | bool = ssl_context or not plain
        self.client = httpx.AsyncClient(verify=verify, trust_env=True)

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        timeouts: Timeouts,
    ) -> ProxiedResponse:
        """Send and return once the response head arrived."""
        timeout = httpx.Timeout(
            timeouts.read, connect=timeouts.connect, write=timeouts.write, pool=timeouts.connect
        )
        request = self.client.build_request(
            method, url, headers=headers, content=content, timeout=timeout
        )
        try:
            return ProxiedResponse(await self.client.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise _ours(exc) from None

    async def aclose(self) -> None:
        """Close httpx's pool."""
        await self.client.aclose()
