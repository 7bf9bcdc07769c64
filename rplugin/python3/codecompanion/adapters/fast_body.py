"""A response body read off its connection in blocks, framed by h11, handed on a read at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import h11

from .http_connection import Connection
from .http_types import Headers, PeerBroke


class Body:
    """One response's body; its connection goes back to the pool only when read whole."""

    def __init__(
        self, connection: Connection, keep: Callable[[Connection], None], timeout: float | None
    ) -> None:
        self._connection = connection
        self._keep = keep
        self._timeout = timeout
        self._complete = False

    def _parsed(self) -> tuple[list[bytes], bool]:
        """The body bytes h11 can frame from what was read, and whether the body ended."""
        pieces: list[bytes] = []
        next_event = self._connection.next_event
        while True:
            event = next_event()
            kind = type(event)
            if kind is h11.Data:
                pieces.append(event.data)
            elif event is h11.NEED_DATA:
                return pieces, False
            else:  # EndOfMessage (a ConnectionClosed or PAUSED cannot come before it)
                return pieces, True

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive: everything one socket read completes, as one piece."""
        while True:
            pieces, ended = self._parsed()
            if pieces:
                yield b"".join(pieces)
            if ended:
                break
            await self._connection.receive(self._timeout)
        self._complete = True

    async def aclose(self) -> None:
        """Give the connection back when the body was read whole; otherwise close it."""
        connection = self._connection
        if not self._complete:
            # An empty body (HEAD, 204, 304) may be whole already without a read.
            try:
                pieces, self._complete = self._parsed()
            except PeerBroke:  # closed below
                pieces = [b""]
            self._complete = self._complete and not pieces
        if self._complete and connection.reusable():
            self._keep(connection)
        else:
            connection.close()


class FastResponse:
    """A response with its body still on the wire."""

    def __init__(self, status: int, headers: Headers, body: Body) -> None:
        self.status_code = status
        self.headers = headers
        self._body = body

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (still compressed when the server compressed it)."""
        return self._body.chunks()

    async def aclose(self) -> None:
        """Release the connection."""
        await self._body.aclose()
