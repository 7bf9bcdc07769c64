"""An HTTP/1.1 transport for httpx on plain asyncio streams, for the providers' requests.

httpx's own transport goes through httpcore, anyio and h11, and hands a streamed answer over
one HTTP chunk at a time: a provider sending 1,000 small SSE chunks costs 1,000 trips through
those layers (half the host's CPU for such an answer), and the layers cost about 0.6 ms per
request and 2.5 MB of memory. This transport reads the socket in blocks and yields everything
one read decoded at once. It keeps idle connections for reuse, and is only used without a
proxy (httpx's transport handles proxies from the environment).
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import httpx

_READ = 65536
_MAX_HEAD = 65536
_IDLE_PER_HOST = 4

Key = tuple[str, str, int]
Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def proxied() -> bool:
    """True when the environment names a proxy (then httpx's own transport is used)."""
    return bool(urllib.request.getproxies())


def _timeout(request: httpx.Request, name: str) -> float | None:
    value = (request.extensions.get("timeout") or {}).get(name)
    return None if value is None else float(value)


async def _within(step: Any, seconds: float | None) -> Any:
    return await (asyncio.wait_for(step, seconds) if seconds is not None else step)


class FastTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over asyncio streams with a small keep-alive pool."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl_context = ssl_context
        self._idle: dict[Key, list[Streams]] = {}

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and return the response with its body still on the wire."""
        url = request.url
        https = url.scheme == "https"
        key = (url.scheme, url.host, url.port or (443 if https else 80))
        head = _request_head(request)
        body = await request.aread()
        reused = self._take(key)
        if reused is not None:
            try:
                return await self._exchange(request, key, reused, head + body)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                reused[1].close()  # the server closed the idle connection: one fresh try
        streams = await self._connect(request, key, https)
        return await self._exchange(request, key, streams, head + body)

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

    async def _connect(self, request: httpx.Request, key: Key, https: bool) -> Streams:
        _scheme, host, port = key
        tls = self._tls() if https else None
        try:
            opened = asyncio.open_connection(
                host, port, ssl=tls, server_hostname=host if tls else None, limit=_MAX_HEAD
            )
            reader, writer = await _within(opened, _timeout(request, "connect"))
        except asyncio.TimeoutError:
            raise httpx.ConnectTimeout("connecting timed out", request=request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc), request=request) from None
        tls_object = writer.get_extra_info("ssl_object")
        if tls_object is not None and tls_object.selected_alpn_protocol() not in (None, "http/1.1"):
            writer.close()  # a context shared with an HTTP/2 client offered h2 and got it
            raise httpx.ConnectError("the server chose a protocol other than HTTP/1.1")
        return reader, writer

    async def _exchange(
        self, request: httpx.Request, key: Key, streams: Streams, data: bytes
    ) -> httpx.Response:
        reader, writer = streams
        try:
            writer.write(data)
            await _within(writer.drain(), _timeout(request, "write"))
        except asyncio.TimeoutError:
            writer.close()
            raise httpx.WriteTimeout("sending timed out", request=request) from None
        except OSError as exc:
            raise httpx.WriteError(str(exc), request=request) from None
        status, reason, headers, http10 = await _response_head(request, reader, writer)
        body = _Body(self, request, key, streams, headers, status, request.method == "HEAD")
        body.reusable = body.reusable and not http10
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        """Close every idle connection."""
        for pool in self._idle.values():
            for _reader, writer in pool:
                writer.close()
        self._idle.clear()


def _request_head(request: httpx.Request) -> bytes:
    target = request.url.raw_path or b"/"
    lines = [request.method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in request.headers.raw]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _response_head(
    request: httpx.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bool]:
    try:
        raw = await _within(reader.readuntil(b"\r\n\r\n"), _timeout(request, "read"))
    except asyncio.TimeoutError:
        writer.close()
        raise httpx.ReadTimeout("no answer in time", request=request) from None
    except asyncio.IncompleteReadError:
        writer.close()
        raise httpx.RemoteProtocolError("server closed the connection", request=request) from None
    except (asyncio.LimitOverrunError, ValueError):
        writer.close()
        raise httpx.RemoteProtocolError("response head too long", request=request) from None
    except OSError as exc:
        writer.close()
        raise httpx.ReadError(str(exc), request=request) from None
    status_line, *header_lines = raw[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        writer.close()
        raise httpx.RemoteProtocolError("malformed status line", request=request)
    headers = []
    for line in header_lines:
        name, sep, value = line.partition(b":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return int(parts[1]), parts[2] if len(parts) > 2 else b"", headers, parts[0] == b"HTTP/1.0"


class _Body(httpx.AsyncByteStream):
    """A response body read in blocks: by Content-Length, chunked, or up to the close."""

    def __init__(
        self,
        transport: FastTransport,
        request: httpx.Request,
        key: Key,
        streams: Streams,
        headers: list[tuple[bytes, bytes]],
        status: int,
        head_only: bool,
    ) -> None:
        self._transport, self._request, self._key, self._streams = transport, request, key, streams
        fields = {name.lower(): value.lower() for name, value in headers}
        self._chunked = b"chunked" in fields.get(b"transfer-encoding", b"")
        length = fields.get(b"content-length", b"")
        self._length = int(length) if length.isdigit() and not self._chunked else None
        if head_only or status in (204, 304) or 100 <= status < 200:
            self._length = 0
        self.reusable = b"close" not in fields.get(b"connection", b"") and (
            self._chunked or self._length is not None
        )
        self._complete = False

    async def _read(self) -> bytes:
        reader, writer = self._streams
        try:
            return bytes(await _within(reader.read(_READ), _timeout(self._request, "read")))
        except asyncio.TimeoutError:
            writer.close()
            raise httpx.ReadTimeout("the answer stopped", request=self._request) from None
        except OSError as exc:
            writer.close()
            raise httpx.ReadError(str(exc), request=self._request) from None

    def _cut(self) -> httpx.RemoteProtocolError:
        self._streams[1].close()
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=self._request
        )

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._chunked:
            async for piece in self._chunks():
                yield piece
        elif self._length is not None:
            left = self._length
            while left > 0:
                data = await self._read()
                if not data:
                    raise self._cut()
                left -= len(data)
                yield data[: len(data) + min(left, 0)]
        else:
            while data := await self._read():
                yield data
        self._complete = True

    async def _chunks(self) -> AsyncIterator[bytes]:
        """Decode chunked transfer; everything one read completes is yielded together."""
        buffer = bytearray()
        size: int | None = None  # bytes of the current chunk still to come (with its CRLF)
        while True:
            data = await self._read()
            if not data:
                raise self._cut()
            buffer += data
            out = bytearray()
            while True:
                if size is None:
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        break
                    field = bytes(buffer[:end]).split(b";", 1)[0].strip()
                    try:
                        size = int(field, 16)
                    except ValueError:
                        raise self._cut() from None
                    del buffer[: end + 2]
                    if size == 0:
                        if out:
                            yield bytes(out)
                        await self._trailers(buffer)
                        return
                if len(buffer) < size + 2:
                    break
                out += buffer[:size]
                del buffer[: size + 2]
                size = None
            if out:
                yield bytes(out)

    async def _trailers(self, buffer: bytearray) -> None:
        """Read up to the blank line that ends the trailers."""
        while not (buffer.startswith(b"\r\n") or b"\r\n\r\n" in buffer):
            data = await self._read()
            if not data:
                raise self._cut()
            buffer += data

    async def aclose(self) -> None:
        """Give the connection back when the body was read whole; otherwise close it."""
        if self._complete and self.reusable:
            self._transport.give_back(self._key, self._streams)
        else:
            self._streams[1].close()
