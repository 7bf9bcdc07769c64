"""The providers' HTTP/1.1 client on plain asyncio streams.

A general client (httpx over httpcore, anyio and h11) hands a streamed answer over one HTTP
chunk at a time: a provider sending 1,000 small SSE chunks costs 1,000 trips through those
layers (half the host's CPU for such an answer), and the layers cost about 0.6 ms per request
and 4 MB of memory. This client reads the socket in blocks and yields everything one read
decoded at once. It keeps idle connections for reuse, and is only used without a proxy
(`proxied_http` handles proxies from the environment).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from ..tls import build_trust
from .fast_body import Body, FastResponse, Key, Streams, within
from .http_types import (
    ConnectFailed,
    ConnectTimedOut,
    Headers,
    IOFailure,
    PeerBroke,
    TimedOut,
    Timeouts,
)

_MAX_HEAD = 65536
_IDLE_PER_HOST = 4
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
# Left as they are in a request target: reserved characters and existing %-escapes.
_SAFE = "!#$%&'()*+,/:;=?@[]~"


def proxied(env: Mapping[str, str] | None = None) -> bool:
    """True when the environment names a proxy (then `proxied_http` sends the requests)."""
    env = os.environ if env is None else env
    return any(value.strip() for name, value in env.items() if name.lower() in _PROXY_VARIABLES)


def with_params(url: str, params: Mapping[str, str]) -> str:
    """`url` with `params` added to its query."""
    if not params:
        return url
    return url + ("&" if "?" in url else "?") + urlencode(params)


@dataclass(frozen=True)
class _Request:
    """One request ready for the wire: where it goes, its bytes, its timeouts."""

    key: Key
    data: bytes
    head_only: bool
    timeouts: Timeouts


def _prepare(
    method: str, url: str, headers: Mapping[str, str], content: bytes | None, timeouts: Timeouts
) -> _Request:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ConnectFailed(f"not an http(s) URL: {url}")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ConnectFailed(f"the URL's port is not a number: {url}") from None
    target = quote((parts.path or "/") + ("?" + parts.query if parts.query else ""), safe=_SAFE)
    fields = {"host": parts.netloc.rpartition("@")[2], "user-agent": "codecompanion"}
    fields.update((name.lower(), value) for name, value in headers.items())
    if content is not None or method in ("POST", "PUT", "PATCH"):
        fields["content-length"] = str(len(content or b""))
    lines = [f"{method} {target} HTTP/1.1"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    if any(c in line for line in lines for c in "\r\n\0"):
        raise ConnectFailed("a request header holds a line break")
    text = "\r\n".join(lines)
    try:
        head = (text + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise ConnectFailed("a request header holds characters HTTP cannot carry") from None
    key = (scheme, parts.hostname, port)
    return _Request(key, head + (content or b""), method == "HEAD", timeouts)


class FastClient:
    """HTTP/1.1 over asyncio streams with a small keep-alive pool."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl_context = ssl_context
        self._idle: dict[Key, list[Streams]] = {}

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:  # a client made without the host's shared context
            self._ssl_context = build_trust(os.environ).context
        return self._ssl_context

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        timeouts: Timeouts,
    ) -> FastResponse:
        """Send one request and return the response with its body still on the wire."""
        request = _prepare(method, url, headers, content, timeouts)
        reused = self._take(request.key)
        if reused is not None:
            try:
                return await self._exchange(request, reused)
            except (PeerBroke, IOFailure):
                reused[1].close()  # the server closed the idle connection: one fresh try
        return await self._exchange(request, await self._connect(request))

    def _take(self, key: Key) -> Streams | None:
        pool = self._idle.get(key) or []
        while pool:
            reader, writer = pool.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        return None

    def give_back(self, key: Key, streams: Streams) -> None:
        """Keep a connection whose response was read whole for the next request."""
        pool = self._idle.setdefault(key, [])
        if len(pool) < _IDLE_PER_HOST:
            pool.append(streams)
        else:
            streams[1].close()

    async def _connect(self, request: _Request) -> Streams:
        scheme, host, port = request.key
        tls = self._tls() if scheme == "https" else None
        try:
            opened = asyncio.open_connection(
                host, port, ssl=tls, server_hostname=host if tls else None, limit=_MAX_HEAD
            )
            reader, writer = await within(opened, request.timeouts.connect)
        except asyncio.TimeoutError:
            raise ConnectTimedOut("connecting timed out") from None
        except (OSError, ssl.SSLError) as exc:
            raise ConnectFailed(str(exc) or type(exc).__name__) from None
        tls_object = writer.get_extra_info("ssl_object")
        if tls_object is not None and tls_object.selected_alpn_protocol() not in (None, "http/1.1"):
            writer.close()  # a context shared with an HTTP/2 client offered h2 and got it
            raise ConnectFailed("the server chose a protocol other than HTTP/1.1")
        return reader, writer

    async def _exchange(self, request: _Request, streams: Streams) -> FastResponse:
        reader, writer = streams
        try:
            writer.write(request.data)
            await within(writer.drain(), request.timeouts.write)
        except asyncio.TimeoutError:
            writer.close()
            raise TimedOut("sending timed out") from None
        except OSError as exc:
            raise IOFailure(str(exc) or type(exc).__name__) from None
        status, raw_headers, http10 = await _response_head(request, reader, writer)
        headers = Headers(raw_headers)
        body = Body(self.give_back, request.key, streams, headers, status, request.timeouts.read)
        if request.head_only:
            body.expect_nothing()
        body.reusable = body.reusable and not http10
        return FastResponse(status, headers, body)

    async def aclose(self) -> None:
        """Close every idle connection."""
        for pool in self._idle.values():
            for _reader, writer in pool:
                writer.close()
        self._idle.clear()


async def _response_head(
    request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> tuple[int, list[tuple[bytes, bytes]], bool]:
    try:
        raw = await within(reader.readuntil(b"\r\n\r\n"), request.timeouts.read)
    except asyncio.TimeoutError:
        writer.close()
        raise TimedOut("no answer in time") from None
    except asyncio.IncompleteReadError:
        writer.close()
        raise PeerBroke("server closed the connection") from None
    except (asyncio.LimitOverrunError, ValueError):
        writer.close()
        raise PeerBroke("response head too long") from None
    except OSError as exc:
        writer.close()
        raise IOFailure(str(exc) or type(exc).__name__) from None
    status_line, *header_lines = raw[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)  # version, status, reason
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        writer.close()
        raise PeerBroke("malformed status line")
    headers = []
    for line in header_lines:
        name, sep, value = line.partition(b":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return int(parts[1]), headers, parts[0] == b"HTTP/1.0"
