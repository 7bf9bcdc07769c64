"""A response body read off the socket in blocks: by Content-Length, chunked, or up to the close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from .http_types import Headers, IOFailure, PeerBroke, TimedOut

_READ = 65536

Key = tuple[str, str, int]
Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def within(step: Any, seconds: float | None) -> Any:
    """`step` awaited, bounded by `seconds` when given."""
    return await (asyncio.wait_for(step, seconds) if seconds is not None else step)


class Body:
    """One response's body; its connection goes back to the pool only when read whole."""

    def __init__(
        self,
        keep: Callable[[Key, Streams], None],
        key: Key,
        streams: Streams,
        headers: Headers,
        status: int,
        read_timeout: float | None,
    ) -> None:
        self._keep, self._key, self._streams = keep, key, streams
        self._read_timeout = read_timeout
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length", "").strip()
        self._length = int(length) if length.isdigit() and not self._chunked else None
        if status in (204, 304) or 100 <= status < 200:
            self.expect_nothing()
        self.reusable = "close" not in headers.get("connection", "").lower() and (
            self._chunked or self._length is not None
        )
        self._complete = False

    def expect_nothing(self) -> None:
        """This response has no body whatever its headers say (HEAD, 204, 304)."""
        self._chunked, self._length = False, 0

    async def _read(self) -> bytes:
        reader, writer = self._streams
        try:
            return bytes(await within(reader.read(_READ), self._read_timeout))
        except asyncio.TimeoutError:
            writer.close()
            raise TimedOut("the answer stopped") from None
        except OSError as exc:
            writer.close()
            raise IOFailure(str(exc) or type(exc).__name__) from None

    def _cut(self) -> PeerBroke:
        self._streams[1].close()
        return PeerBroke("peer closed connection without sending complete message body")

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, one piece per socket read."""
        if self._chunked:
            async for piece in self._dechunk():
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

    async def _dechunk(self) -> AsyncIterator[bytes]:
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
            self._keep(self._key, self._streams)
        else:
            self._streams[1].close()


class FastResponse:
    """A response with its body still on the wire."""

    def __init__(self, status: int, headers: Headers, body: Body) -> None:
        self.status_code = status
        self.headers = headers
        self._body = body

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent, in the pieces the socket reads brought."""
        return self._body.chunks()

    async def aclose(self) -> None:
        """Release the connection."""
        await self._body.aclose()
