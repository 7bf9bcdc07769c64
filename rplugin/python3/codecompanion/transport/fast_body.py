"""A response body read off its connection in blocks, framed by h11, handed on a read at a time."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

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

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive: everything one socket read completes, as one piece."""
        while True:
            pieces, ended = self._connection.body_events()
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
            with contextlib.suppress(PeerBroke):  # then not complete: closed below
                pieces, ended = connection.body_events()
                self._complete = ended and not pieces
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
