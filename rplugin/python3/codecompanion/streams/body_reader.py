"""Reading one answer's body: decoded under a size cap, and over at the provider's end marker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..errors import ProviderError
from ..transport.bounded_body import BodyTooLarge, UnsupportedEncoding, decoded_chunks
from ..transport.http_connection import within
from ..transport.http_types import HTTPResponse
from .parser import ResponseParser


@dataclass(frozen=True)
class BodyLimits:
    """How much of an answer is read, and how long to wait once it has ended."""

    label: str
    max_bytes: int
    finish_grace: float  # after a finish reason, for the end marker (usage may come between)
    drain_wait: float  # after the end marker, for the body's own end (to reuse the connection)

    def too_large(self) -> str:
        """The end of the message for a body over the cap."""
        return f"larger than {self.max_bytes // 1_000_000} MB (decompressed); it was not read"


async def answer_chunks(
    response: HTTPResponse, parser: ResponseParser, limits: BodyLimits
) -> AsyncIterator[bytes]:
    """The decoded body up to the provider's end marker, capped at `limits.max_bytes`.

    A server may keep the connection open after the end (`[DONE]`, `message_stop`): the answer
    is complete there. After a finish reason without an end marker, a quiet `finish_grace`
    ends it too.
    """
    chunks = decoded_chunks(response, limits.max_bytes)
    try:
        while not parser.finished:
            wait = None if parser.finish_reason is None else limits.finish_grace
            try:
                # Awaited in this task: wait_for would run each read in a task of its own.
                yield await within(chunks.__anext__(), wait)
            except asyncio.TimeoutError:
                return
        await _drain(chunks, limits.drain_wait)
    except StopAsyncIteration:
        return
    except BodyTooLarge:
        raise ProviderError(f"{limits.label}: the answer is {limits.too_large()}") from None
    except UnsupportedEncoding as exc:
        raise ProviderError(f"{limits.label}: {exc}") from None
    finally:
        await chunks.aclose()


async def _drain(chunks: AsyncIterator[bytes], wait: float) -> None:
    """Read the body's own end briefly, so the pooled connection can serve the next turn."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while (left := deadline - loop.time()) > 0:
        try:
            await within(chunks.__anext__(), left)
        except (asyncio.TimeoutError, StopAsyncIteration, BodyTooLarge):
            return
