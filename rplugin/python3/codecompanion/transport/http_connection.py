"""One HTTP/1.1 connection: asyncio streams carry the bytes, h11 parses and frames them.

h11 (python-hyper's HTTP/1.1 state machine) decides where a response starts and ends: 1xx
responses, Content-Length against chunked, folded or repeated headers, bare LF line ends, and
heads or chunk-size lines that never end (refused past `MAX_HEAD` bytes). This module only moves
bytes in large reads and says when a connection may carry another request: when its response
ended exactly where its framing said, and no byte arrived while it sat idle.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
from collections.abc import Awaitable, Iterable
from typing import SupportsIndex, TypeVar

import h11

from .http_types import ConnectFailed, ConnectTimedOut, IOFailure, NotHTTP, PeerBroke, TimedOut

READ = 65536
# Longest response head (or chunk-size line, or trailer block) h11 keeps before refusing it.
MAX_HEAD = 65536

# Inside a response body, h11's state machine does nothing for a Data event (the server stays
# in SEND_BODY), yet costs as much as framing it: 40 % of a 10,000-chunk answer's framing. For
# the h11 whose internals this was checked against, `body_events` calls the body's reader
# itself for the Data events; whatever else the reader returns goes through the state machine,
# and a read that needs more bytes through `next_event` (tests/adapters/test_direct_body.py
# compares both ways). Any other h11 is only called through `next_event`.
_DIRECT_BODY = str(getattr(h11, "__version__", "")).startswith("0.16.")

Key = tuple[str, str, int]
Event = h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]  # what h11 makes of bytes
T = TypeVar("T")


if sys.version_info >= (3, 11):

    async def within(step: Awaitable[T], seconds: float | None) -> T:
        """`step` awaited, bounded by `seconds` when given (asyncio.TimeoutError past them)."""
        if seconds is None:
            return await step
        # Awaited in this task: wait_for would wrap each socket read in a task of its own.
        async with asyncio.timeout(seconds):
            return await step

else:

    async def within(step: Awaitable[T], seconds: float | None) -> T:
        """`step` awaited, bounded by `seconds` when given (asyncio.TimeoutError past them)."""
        return await (asyncio.wait_for(step, seconds) if seconds is not None else step)


class _WatchedReader(asyncio.StreamReader):
    """A stream reader that counts unread bytes and notices any that arrive while idle."""

    def __init__(self) -> None:
        super().__init__(limit=READ)
        self.idle = False
        self.spoiled = False  # bytes came while no request was waiting for them
        self.unread = 0

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        """Take bytes from the transport (a byte that comes while idle spoils the connection)."""
        if self.idle:
            self.spoiled = True
        # Transports hand bytes; the wider type is the base class's.
        self.unread += len(data) if isinstance(data, (bytes, bytearray)) else len(bytes(data))
        super().feed_data(data)


class Connection:
    """A socket's streams, its h11 state, and how many response bytes the current request got."""

    def __init__(self, key: Key, reader: _WatchedReader, writer: asyncio.StreamWriter) -> None:
        self.key = key
        self._reader = reader
        self._writer = writer
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.received = 0
        self._closed_by_peer = False

    def usable(self) -> bool:
        """True while idle with nothing received and not closed by either side."""
        reader = self._reader
        return not (reader.spoiled or reader.at_eof() or self._writer.is_closing())

    async def send(self, events: list[h11.Event], timeout: float | None) -> None:
        """Write a request's events (framed by h11) and wait until they are sent."""
        self._reader.idle = False
        self.received = 0
        try:
            data = b"".join(self._h11.send(event) or b"" for event in events)
        except h11.LocalProtocolError as exc:
            self.close()
            raise ConnectFailed(f"the request is not valid HTTP/1.1 ({exc})") from None
        try:
            self._writer.write(data)
            await within(self._writer.drain(), timeout)
        except asyncio.TimeoutError:
            self.close()
            raise TimedOut("sending timed out") from None
        except OSError as exc:
            self.close()
            raise IOFailure(str(exc) or type(exc).__name__) from None

    def next_event(self) -> Event:
        """The next thing h11 makes of the bytes received (see `failure` for what it raises)."""
        try:
            return self._h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise self.failure(exc) from None

    def body_events(self) -> tuple[list[bytes], bool]:
        """The body bytes h11 frames from what was read, and whether the body ended there.

        The loop that runs once per HTTP chunk of a streamed answer: h11 is called directly,
        and inside a body its reader too (`_DIRECT_BODY`).
        """
        pieces: list[bytes] = []
        state, data, need = self._h11, h11.Data, h11.NEED_DATA
        next_event = state.next_event
        read = state._reader if _DIRECT_BODY and state.their_state is h11.SEND_BODY else None
        try:
            while read is not None:
                event = read(state._receive_buffer)
                if type(event) is data:
                    pieces.append(event.data)
                    continue
                read = None
                if event is not None:  # EndOfMessage: the state machine takes it as h11 would
                    state._process_event(state.their_role, event)
                    return pieces, True
            while True:  # more bytes needed: h11 checks its size limit and an early close
                event = next_event()
                if type(event) is data:
                    pieces.append(event.data)
                elif event is need:
                    return pieces, False
                else:  # EndOfMessage (a ConnectionClosed or PAUSED cannot come before it)
                    return pieces, True
        except h11.ProtocolError as exc:  # a malformed chunk, from the reader or next_event
            raise self.failure(exc) from None

    def failure(self, exc: h11.ProtocolError) -> PeerBroke:
        """h11's refusal as our failure, the connection closed: PeerBroke when the server
        closed before the response was whole, NotHTTP when its bytes are not HTTP/1.1 (or a
        line of the head or of the chunk framing is longer than `MAX_HEAD`)."""
        self.close()
        if self._closed_by_peer:
            return PeerBroke("peer closed connection without sending complete message")
        return NotHTTP(_reason(exc))

    async def receive(self, timeout: float | None) -> None:
        """Read one block (up to `READ` bytes) into h11; an empty block is the server's close."""
        try:
            data = await within(self._reader.read(READ), timeout)
        except asyncio.TimeoutError:
            self.close()
            raise TimedOut("no answer in time") from None
        except OSError as exc:
            self.close()
            raise IOFailure(str(exc) or type(exc).__name__) from None
        self._reader.unread -= len(data)
        self.received += len(data)
        self._closed_by_peer = not data
        self._h11.receive_data(data)

    def reusable(self) -> bool:
        """After a whole response: ready for the next request when nothing is left over."""
        state = self._h11
        if state.our_state is not h11.DONE or state.their_state is not h11.DONE:
            return False  # Connection: close, HTTP/1.0, or the response is not over
        if state.trailing_data[0] or self._reader.unread or not self.usable():
            return False  # bytes past the response's end: never shown as the next answer
        state.start_next_cycle()
        self._reader.idle = True
        return True

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self._writer.close()


def _reason(exc: h11.ProtocolError) -> str:
    """h11's complaint in the user's words."""
    text = str(exc)
    if text.startswith("Receive buffer too long"):
        return f"a line of its head or chunk framing is longer than {MAX_HEAD // 1024} KiB"
    return text


async def connect(key: Key, tls: ssl.SSLContext | None, timeout: float | None) -> Connection:
    """A new connection to `key`'s host and port (TLS for https, HTTP/1.1 only)."""
    _scheme, host, port = key
    loop = asyncio.get_running_loop()
    reader = _WatchedReader()
    try:
        opened = loop.create_connection(
            lambda: asyncio.StreamReaderProtocol(reader),
            host,
            port,
            ssl=tls,
            server_hostname=host if tls else None,
        )
        transport, protocol = await within(opened, timeout)
    except asyncio.TimeoutError:
        raise ConnectTimedOut("connecting timed out") from None
    except (OSError, ssl.SSLError) as exc:
        raise ConnectFailed(str(exc) or type(exc).__name__) from None
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    tls_object = writer.get_extra_info("ssl_object")
    if tls_object is not None and tls_object.selected_alpn_protocol() not in (None, "http/1.1"):
        writer.close()  # a context shared with an HTTP/2 client offered h2 and got it
        raise ConnectFailed("the server chose a protocol other than HTTP/1.1")
    return Connection(key, reader, writer)
