"""HTTP bodies read under a size limit, decompressed in bounded steps.

A general HTTP client inflates a compressed chunk in one call, so a few kilobytes of gzip can
become hundreds of megabytes before any limit is checked. Reading the raw bytes and inflating
them here, at most `STEP` bytes at a time, keeps memory within the limit whatever the server
sends.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

# What we ask servers for: only encodings inflated here, in bounded steps.
ACCEPT_ENCODING = "gzip, deflate"
STEP = 1 << 20


class _Fields(Protocol):
    def get(self, key: str, default: str | None = None) -> str | None: ...


class RawResponse(Protocol):
    """A response read as sent: the providers' clients' and httpx's both fit."""

    @property
    def headers(self) -> _Fields:
        """The response headers (looked up without regard to case)."""

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent, still compressed."""


class BodyTooLarge(Exception):
    """The body (after decompression) is larger than the limit."""

    def __init__(self, limit: int, head: bytes = b"") -> None:
        super().__init__(f"larger than {limit:,} bytes")
        self.limit = limit
        self.head = head  # the decoded bytes of the last step, for readers that keep a prefix


class UnsupportedEncoding(Exception):
    """The server compressed the body in a way this reader does not inflate."""


def _layer(name: str) -> Any:
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if name == "deflate":
        return zlib.decompressobj()
    raise UnsupportedEncoding(f"the server used the unsupported content encoding {name!r}")


@dataclass
class BoundedDecoder:
    """Raw body bytes in, decoded bytes out; raises BodyTooLarge past `limit` decoded bytes."""

    encoding: str
    limit: int
    total: int = 0
    _names: list[str] = field(default_factory=list)
    _layers: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        names = [n.strip().lower() for n in self.encoding.split(",")]
        self._names = [n for n in names if n and n != "identity"]
        # Encodings are listed in the order they were applied: undo them last first.
        self._names.reverse()
        self._layers = [_layer(name) for name in self._names]

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded bytes `raw` yields, in pieces of at most `STEP` bytes."""
        return self._through(0, raw)

    def close(self) -> Iterator[bytes]:
        """Whatever the decompressors still hold."""
        for index in range(len(self._layers)):
            tail = self._layers[index].flush()
            if tail:
                yield from self._through(index + 1, tail)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        """`data` inflated by layer `index` and every layer after it, piece by piece."""
        if index == len(self._layers):
            if data:
                yield self._count(data)
            return
        for piece in self._inflate(index, data):
            yield from self._through(index + 1, piece)

    def _count(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.total > self.limit:
            raise BodyTooLarge(self.limit, data)
        return data

    def _inflate(self, index: int, data: bytes) -> Iterator[bytes]:
        produced = 0
        layer = self._layers[index]
        while data:
            try:
                piece = layer.decompress(data, STEP)
            except zlib.error as exc:
                if self._names[index] == "deflate" and not produced and not layer.unused_data:
                    # Some servers send raw deflate without the zlib header.
                    layer = self._layers[index] = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise UnsupportedEncoding(f"the compressed body is damaged ({exc})") from None
            produced += len(piece)
            if piece:
                yield piece
            data = layer.unconsumed_tail
            if not data and layer.eof and layer.unused_data:
                # A gzip body may hold several members, one after another.
                data = layer.unused_data
                layer = self._layers[index] = _layer(self._names[index])


async def decoded_chunks(response: RawResponse, limit: int) -> AsyncGenerator[bytes, None]:
    """The response body, decoded, in chunks; BodyTooLarge past `limit` decoded bytes."""
    decoder = BoundedDecoder(response.headers.get("content-encoding") or "", limit)
    async for raw in response.aiter_raw():
        for data in decoder.feed(raw):
            yield data
    for data in decoder.close():
        yield data


async def read_capped(response: RawResponse, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` decoded bytes of the body, and whether more was cut off."""
    body = bytearray()
    try:
        async for chunk in decoded_chunks(response, limit):
            body += chunk
    except BodyTooLarge as exc:
        body += exc.head[: limit + 1 - len(body)]
        return bytes(body[:limit]), True
    return bytes(body), False
