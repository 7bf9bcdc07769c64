"""A response body framed by `Connection.body_events` (h11's reader called directly inside a
body) gives what h11's public `next_event` gives: the same bytes, the same end, the same
refusals, the same state after it, whatever the body and however it is split."""

from __future__ import annotations

from collections.abc import Callable

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codecompanion.transport import http_connection
from codecompanion.transport.http_connection import Connection
from codecompanion.transport.http_types import PeerBroke

HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
LENGTH_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
ENDINGS = ["0\r\n\r\n", "0\r\nX-Trailer: t\r\n\r\n", "0;ext=1\r\n\r\nleftover", "cut", "bad_footer"]
ENDINGS += ["bad_size", "length"]


class _Socket:
    """The stream ends of a connection: only `close` is used while framing."""

    closed = False

    def close(self) -> None:
        self.closed = True


def _opened(conn: h11.Connection, head: bytes) -> None:
    conn.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(head)
    assert type(conn.next_event()) is h11.Response


def _public(conn: h11.Connection) -> tuple[list[bytes], bool]:
    pieces = []
    while True:
        event = conn.next_event()
        if type(event) is h11.Data:
            pieces.append(event.data)
        elif event is h11.NEED_DATA:
            return pieces, False
        else:
            return pieces, True


def _body(payloads: list[bytes], ending: str) -> tuple[bytes, bytes]:
    """A response head and a body of `payloads` in chunks, ending as `ending` says."""
    if ending == "length":
        whole = b"".join(payloads)
        return LENGTH_HEAD % len(whole), whole
    chunks = b"".join(b"%x;n=1\r\n%s\r\n" % (len(p), p) for p in payloads if p)
    if ending == "bad_footer":
        return HEAD, chunks + b"3\r\nabcXY"
    if ending == "bad_size":
        return HEAD, chunks + b"zz\r\n"
    if ending == "cut":
        return HEAD, chunks[: len(chunks) * 2 // 3]
    return HEAD, chunks + ending.encode()


def _steps(
    frame: Callable[[], tuple[list[bytes], bool]],
    conn: h11.Connection,
    body: bytes,
    cuts: list[int],
    close: bool,
) -> list[object]:
    """What framing each piece of `body` (then the server's close) gives, until an end or error."""
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    seen: list[object] = []
    for piece in [*pieces, *([b""] if close else [])]:
        conn.receive_data(piece)
        try:
            data, ended = frame()
        except (h11.RemoteProtocolError, PeerBroke) as exc:
            return [*seen, ("refused", str(exc))]
        seen.append((b"".join(data), ended))
        if ended:
            return [*seen, conn.their_state, conn.trailing_data]
    return seen


@settings(max_examples=300, deadline=None)
@given(
    payloads=st.lists(st.binary(max_size=40), max_size=12),
    ending=st.sampled_from(ENDINGS),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
    close=st.booleans(),
)
def test_direct_framing_is_h11s(
    payloads: list[bytes], ending: str, cuts: list[int], close: bool
) -> None:
    head, body = _body(payloads, ending)
    public = h11.Connection(h11.CLIENT, max_incomplete_event_size=http_connection.MAX_HEAD)
    _opened(public, head)
    ours = Connection(("http", "x", 80), _Socket(), _Socket())  # type: ignore[arg-type]
    _opened(ours._h11, head)
    expected = _steps(lambda: _public(public), public, body, cuts, close)
    assert _steps(ours.body_events, ours._h11, body, cuts, close) == expected


def test_inside_a_body_the_state_machine_sees_only_its_end() -> None:
    ours = Connection(("http", "x", 80), _Socket(), _Socket())  # type: ignore[arg-type]
    _opened(ours._h11, HEAD)
    seen: list[object] = []
    process = ours._h11._process_event

    def counted(role: object, event: h11.Event) -> None:
        seen.append(type(event))
        process(role, event)  # type: ignore[arg-type]

    ours._h11._process_event = counted  # type: ignore[method-assign]
    ours._h11.receive_data(b"".join(b"1\r\n%d\r\n" % (i % 10) for i in range(100)))
    assert ours.body_events() == ([b"%d" % (i % 10) for i in range(100)], False)
    ours._h11.receive_data(b"0\r\n\r\n")
    assert ours.body_events() == ([], True)
    assert seen == (
        [h11.EndOfMessage]
        if http_connection._DIRECT_BODY
        else [h11.Data] * 100 + [h11.EndOfMessage]
    )


def test_the_direct_way_is_taken_for_the_h11_it_was_checked_against() -> None:
    if not h11.__version__.startswith("0.16."):  # type: ignore[attr-defined]
        pytest.skip(f"h11 {h11.__version__} is only called through next_event")  # type: ignore[attr-defined]
    assert http_connection._DIRECT_BODY
