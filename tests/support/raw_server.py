"""A loopback server that answers each request with scripted raw bytes (anything, valid or not),
and the OpenAI stream bodies the scripts carry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

# A reply writes at once (a plain function) or over time (a coroutine function).
Reply = Callable[[asyncio.StreamWriter], "Awaitable[None] | None"]


class RawServer:
    """Answers the n-th request (on whatever connection) with the n-th reply.

    A reply writes what it likes; the connection is then kept for the next request unless the
    reply closed it. Requests are read by Content-Length, as the client sends them.
    """

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[bytes] = []
        self.connections = 0
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        """Listen on loopback; returns the base URL."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def close(self) -> None:
        """Stop listening and end every connection."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while self.replies and not writer.is_closing():
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                outcome = self.replies.pop(0)(writer)
                if outcome is not None:
                    await outcome
                if not writer.is_closing():
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)
            self._writers.discard(writer)


def sse(text: str) -> bytes:
    """An OpenAI chat stream whose answer is `text`."""
    delta = {"choices": [{"index": 0, "delta": {"content": text}}]}
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return b"data: %s\n\ndata: %s\n\ndata: [DONE]\n\n" % (
        json.dumps(delta).encode(),
        json.dumps(done).encode(),
    )


def raw(*parts: bytes, close: bool = False, pause: float = 0.0) -> Reply:
    """A reply writing `parts` in order (with `pause` seconds between them)."""

    async def reply(writer: asyncio.StreamWriter) -> None:
        for index, part in enumerate(parts):
            if index and pause:
                await writer.drain()
                await asyncio.sleep(pause)
            writer.write(part)
        if close:
            await writer.drain()
            writer.close()

    return reply


def sized(body: bytes, head: bytes = b"Content-Type: text/event-stream\r\n") -> bytes:
    """A whole 200 response framed by Content-Length."""
    return b"HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body)


def answer(text: str) -> Reply:
    """A well-formed streamed answer of `text`."""
    return raw(sized(sse(text)))


def endless(head: bytes, filler: bytes, limit: int = 64 << 20) -> Reply:
    """`head`, then `filler` over and over until the client hangs up (at most `limit` bytes)."""

    async def reply(writer: asyncio.StreamWriter) -> None:
        writer.write(head)
        block = filler * max(1, 65536 // len(filler))
        sent = 0
        try:
            while sent < limit and not writer.is_closing():
                writer.write(block)
                sent += len(block)
                await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    return reply
