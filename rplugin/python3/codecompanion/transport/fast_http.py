"""The providers' HTTP/1.1 client: asyncio streams and large reads, h11 for the protocol.

A general client (httpx over httpcore and anyio) hands a streamed answer over one HTTP chunk at
a time: a provider sending 1,000 small SSE chunks costs 1,000 trips through those layers, and
the layers cost about 0.6 ms per request and 4 MB of memory. This client reads the socket in
blocks and yields everything one read decoded at once; h11 parses and frames every byte
(`http_connection`). It keeps idle connections for reuse, opens the next one ahead while a tool
round runs (`warm`), and is only used without a proxy (`proxied_http` handles proxies from the
environment).
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, unquote, urlencode, urlsplit

import h11

from .fast_body import Body, FastResponse
from .http_connection import Connection, Key, connect
from .http_types import ConnectFailed, Headers, IOFailure, PeerBroke, TimedOut, Timeouts
from .tls import build_trust

_IDLE_PER_HOST = 4
_INTERIM_MAX = 16  # 1xx responses (100 Continue, 103 Early Hints) skipped before the answer
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


def without_credentials(url: str) -> str:
    """`url` with the password of its user part (if any) replaced by ***, for logs and messages."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    user, at, host = authority.rpartition("@")
    if not sep or not at:
        return url
    name = user.partition(":")[0]
    return f"{scheme}://{name}:***@{host}{slash}{path}"


def basic_auth(url: str) -> str | None:
    """The Authorization value for credentials in `url` (None without any), as httpx sends it."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _ascii_host(host: str) -> str:
    """The host name as DNS, TLS and the Host header need it (IDNA for non-ASCII names)."""
    if host.isascii():
        return host
    import idna  # only for international names: its tables cost memory

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ConnectFailed(f"the host name {host!r} is not a valid domain name ({exc})") from None


@dataclass(frozen=True)
class _Request:
    """One request ready for the wire: where it goes, its h11 events, its timeouts."""

    key: Key
    events: list[h11.Event]
    timeouts: Timeouts


def _authority(parts: SplitResult) -> tuple[Key, str]:
    """Where the request goes, and its Host header."""
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ConnectFailed(f"not an http(s) URL: {without_credentials(parts.geturl())}")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ConnectFailed("the URL's port is not a number") from None
    host = _ascii_host(parts.hostname)
    shown = f"[{host}]" if ":" in host else host
    return (scheme, host, port), shown + (f":{parts.port}" if parts.port else "")


def _prepare(
    method: str, url: str, headers: Mapping[str, str], content: bytes | None, timeouts: Timeouts
) -> _Request:
    parts = urlsplit(url)
    key, host = _authority(parts)
    target = quote((parts.path or "/") + ("?" + parts.query if parts.query else ""), safe=_SAFE)
    fields = {"host": host, "user-agent": "codecompanion"}
    fields.update((name.lower(), value) for name, value in headers.items())
    credentials = basic_auth(url)
    if credentials is not None:  # the URL's user and password win, as in httpx
        fields["authorization"] = credentials
    if content is not None or method in ("POST", "PUT", "PATCH"):
        fields["content-length"] = str(len(content or b""))
    try:
        wire = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in fields.items()]
    except UnicodeEncodeError:
        raise ConnectFailed("a request header holds characters HTTP cannot carry") from None
    try:
        request = h11.Request(method=method, target=target, headers=wire)
    except h11.LocalProtocolError:  # the message would quote the header: it may be a key
        raise ConnectFailed("a request header holds a line break or a control character") from None
    events: list[h11.Event] = [request]
    if content:
        events.append(h11.Data(data=content))
    events.append(h11.EndOfMessage())
    return _Request(key, events, timeouts)


class FastClient:
    """HTTP/1.1 over asyncio streams with a small keep-alive pool."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl_context = ssl_context
        self._idle: dict[Key, list[Connection]] = {}
        self._last: Key | None = None  # where the last request went

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
        self._last = request.key
        reused = self._take(request.key)
        if reused is not None:
            try:
                return await self._exchange(request, reused)
            except (PeerBroke, IOFailure):
                reused.close()
                if reused.received:
                    raise  # part of an answer came: sending again could act twice
                # The server closed the idle connection before any byte of an answer: one fresh try.
        scheme = request.key[0]
        tls = self._tls() if scheme == "https" else None
        connection = await connect(request.key, tls, timeouts.connect)
        return await self._exchange(request, connection)

    async def warm(self, timeout: float | None) -> None:
        """Open a connection to where the last request went, unless one is idle there: the
        next request skips the connect (and TLS) when the server closed the last one."""
        key = self._last
        if key is None or any(c.usable() for c in self._idle.get(key, [])):
            return
        tls = self._tls() if key[0] == "https" else None
        self.give_back(await connect(key, tls, timeout))

    def _take(self, key: Key) -> Connection | None:
        pool = self._idle.get(key) or []
        while pool:
            connection = pool.pop()
            if connection.usable():
                return connection
            connection.close()
        return None

    def give_back(self, connection: Connection) -> None:
        """Keep a connection whose response was read whole for the next request."""
        pool = self._idle.setdefault(connection.key, [])
        if len(pool) < _IDLE_PER_HOST:
            pool.append(connection)
        else:
            connection.close()

    async def _exchange(self, request: _Request, connection: Connection) -> FastResponse:
        timeouts = request.timeouts
        await connection.send(request.events, timeouts.write)
        response = await _response_head(connection, timeouts.read)
        body = Body(connection, self.give_back, timeouts.read)
        return FastResponse(response.status_code, Headers(response.headers), body)

    async def aclose(self) -> None:
        """Close every idle connection."""
        for pool in self._idle.values():
            for connection in pool:
                connection.close()
        self._idle.clear()


async def _response_head(connection: Connection, timeout: float | None) -> h11.Response:
    """The final response's head (1xx responses skipped); the whole head within `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    interim = 0
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                connection.close()
                raise TimedOut("no answer in time")
            await connection.receive(left)
        elif type(event) is h11.Response:
            return event
        else:  # an InformationalResponse: 100 Continue, 103 Early Hints
            interim += 1
            if interim > _INTERIM_MAX:
                connection.close()
                raise PeerBroke(f"the server sent more than {_INTERIM_MAX} interim (1xx) responses")
