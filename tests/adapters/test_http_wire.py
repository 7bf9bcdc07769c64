"""The providers' HTTP client against a raw-socket server sending exactly the bytes that broke the
hand-written parser: interim (1xx) responses, surplus body bytes on a kept connection, repeated
Content-Length, bare LF, one huge chunk, endless chunk-size lines and headers, a gzip bomb,
transfer codings other than chunked, credentials in the URL, folded headers and international
host names. Every turn gets its own answer or one clean line, within seconds; memory stays near
the body cap."""

from __future__ import annotations

import asyncio
import base64
import gzip
import logging
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable

import pytest
from tests.support.adapters import collect
from tests.support.raw_server import RawServer, Reply, answer, endless, raw, sized, sse

from codecompanion.adapters.base import AdapterSettings, TextDelta
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.adapters.openai_compatible import OpenAICompatibleAdapter
from codecompanion.errors import AdapterError
from codecompanion.transport.fast_http import FastClient
from codecompanion.transport.http_types import ConnectFailed, Timeouts

CAP = 4_000_000  # the body cap in these tests (the real one is 64 MB)
QUICK = 5.0  # seconds any turn may take (the read timeout is far longer: a hang would show)
LIMITS = Timeouts(connect=5.0, read=30.0, write=5.0)
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)

Turns = Callable[..., "asyncio.Future[list[str]]"]


@pytest.fixture
async def servers() -> AsyncIterator[list[RawServer]]:
    started: list[RawServer] = []
    yield started
    for server in started:
        await server.close()


async def turns(
    server: RawServer, count: int = 2, gap: float = 0.0, url: str | None = None, **options: object
) -> list[str]:
    """Each turn's answer text, or `error: <message>`; every turn within QUICK seconds."""
    base = url or (await server.start() + "/v1")
    settings = AdapterSettings(
        name="openai",
        url=base,
        api_key="k",
        model="m",
        read_timeout=30.0,
        retry_backoff=0.01,
        **options,  # type: ignore[arg-type]
    )
    adapter = OpenAIAdapter(settings)
    adapter.max_body_bytes = CAP  # type: ignore[misc]
    out: list[str] = []
    try:
        for _ in range(count):
            began = time.monotonic()
            try:
                events = await asyncio.wait_for(collect(adapter), QUICK)
                out.append("".join(e.text for e in events if isinstance(e, TextDelta)))
            except AdapterError as exc:
                assert "\n" not in str(exc) and len(str(exc)) < 300, str(exc)
                out.append(f"error: {exc}")
            assert time.monotonic() - began < QUICK
            await asyncio.sleep(gap)
    finally:
        await adapter.aclose()
    return out


def head(*lines: bytes, sep: bytes = b"\r\n") -> bytes:
    return sep.join(lines) + sep + sep


ONE = sse("one")


@pytest.mark.parametrize(
    "first",
    [
        raw(b"HTTP/1.1 100 Continue\r\n\r\n" + sized(ONE)),
        raw(
            b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\n",
            sized(ONE),
            pause=0.05,
        ),
    ],
    ids=["100-continue", "103-early-hints-then-100"],
)
async def test_interim_responses_are_skipped_and_each_turn_gets_its_own_answer(
    first: Reply, servers: list[RawServer]
) -> None:
    server = RawServer(first, answer("two"))
    servers.append(server)
    assert await turns(server) == ["one", "two"]
    assert server.connections == 1  # the kept connection was right to keep


async def test_surplus_body_bytes_close_the_connection_and_never_answer_a_turn(
    servers: list[RawServer],
) -> None:
    smuggled = sized(sse("smuggled"))
    server = RawServer(raw(sized(ONE) + smuggled), answer("two"))
    servers.append(server)
    assert await turns(server) == ["one", "two"]
    assert server.connections == 2


async def test_bytes_arriving_on_an_idle_kept_connection_spoil_it(
    servers: list[RawServer],
) -> None:
    # The surplus comes after the answer ended, while the connection waits in the pool.
    server = RawServer(raw(sized(ONE), sized(sse("smuggled")), pause=0.3), answer("two"))
    servers.append(server)
    assert await turns(server, gap=0.6) == ["one", "two"]
    assert server.connections == 2


@pytest.mark.parametrize(
    "first",
    [
        head(b"HTTP/1.1 200 OK", b"Content-Length: %d" % len(ONE), b"Content-Length: %d" % len(ONE))
        + ONE,
        head(b"HTTP/1.1 200 OK", b"Content-Length: %d, %d" % (len(ONE), len(ONE))) + ONE,
        head(b"HTTP/1.1 200 OK", b"Content-Length: %d" % len(ONE), sep=b"\n") + ONE,
        head(b"HTTP/1.1 200 OK", b"X-Folded: first", b"  second", b"Content-Length: %d" % len(ONE))
        + ONE,
    ],
    ids=["duplicate-content-length", "listed-content-length", "bare-lf", "obs-fold"],
)
async def test_lenient_but_unambiguous_heads_are_read_at_once(
    first: bytes, servers: list[RawServer]
) -> None:
    server = RawServer(raw(first), answer("two"))
    servers.append(server)
    assert await turns(server) == ["one", "two"]


async def test_a_folded_header_keeps_its_value() -> None:
    server = RawServer(
        raw(
            head(
                b"HTTP/1.1 200 OK",
                b"Retry-After: 1",
                b"X-Folded: first",
                b"\tsecond",
                b"Content-Length: 0",
            )
        )
    )
    url = await server.start()
    client = FastClient()
    try:
        response = await client.send("GET", url, {}, None, LIMITS)
        assert response.headers.get("x-folded") == "first second"
        assert response.headers.get("retry-after") == "1"
        await response.aclose()
    finally:
        await client.aclose()
        await server.close()


@pytest.mark.parametrize(
    "first, says",
    [
        (
            head(b"HTTP/1.1 200 OK", b"Content-Length: 5", b"Content-Length: 6") + b"hello!",
            "not valid HTTP/1.1",
        ),
        (
            head(b"HTTP/1.1 200 OK", b"Transfer-Encoding: gzip, chunked")
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(gzip.compress(ONE)), gzip.compress(ONE)),
            "Only Transfer-Encoding: chunked is supported",
        ),
        (
            head(b"HTTP/1.1 200 OK", b"Transfer-Encoding: xchunked")
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(ONE), ONE),
            "Only Transfer-Encoding: chunked is supported",
        ),
        (b"HTTP/1.1 200\r\nContent-Length: 3\r\n\r\nabc", "could not be read: abc"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not valid HTTP/1.1"),
    ],
    ids=["conflicting-content-length", "gzip-chunked", "xchunked", "no-reason", "not-http"],
)
async def test_ambiguous_or_unsupported_framing_is_one_clean_line(
    first: bytes, says: str, servers: list[RawServer]
) -> None:
    server = RawServer(raw(first), answer("two"))
    servers.append(server)
    got = await turns(server)
    assert got[0].startswith("error: OpenAI") and says in got[0], got[0]
    assert got[1] == "two"


@pytest.mark.parametrize(
    "first, says",
    [
        (endless(CHUNKED, b"f"), "longer than 64 KiB"),
        (endless(b"HTTP/1.1 200 OK\r\nX-Endless: ", b"a"), "longer than 64 KiB"),
        (endless(b"HTTP/1.1 200 OK\r\n", b"X-Many: yes\r\n"), "longer than 64 KiB"),
        (endless(CHUNKED + b"ffffffff\r\n", b"data: %s\n\n" % (b"x" * 2000)), "larger than 4 MB"),
        (endless(CHUNKED + b"ffffffff\r\n", b"x"), "larger than 4 MB"),
    ],
    ids=["endless-chunk-size", "endless-header", "endless-head", "huge-chunk", "huge-line"],
)
async def test_endless_framing_is_refused_quickly_with_one_line(
    first: Reply, says: str, servers: list[RawServer]
) -> None:
    server = RawServer(first, answer("two"))
    servers.append(server)
    began = time.process_time()
    got = await turns(server)
    assert time.process_time() - began < 3.0  # the old parser spent ~47 s of CPU on a size line
    assert got[0].startswith("error: OpenAI") and says in got[0], got[0]
    assert got[1] == "two"


def bomb() -> bytes:
    """~50 KB of gzip that inflates to 48 MB of zero bytes."""
    return gzip.compress(bytes(48 << 20), 9)


@pytest.mark.parametrize(
    "first",
    [
        endless(CHUNKED + b"ffffffff\r\n", b"x"),
        endless(CHUNKED + b"ffffffff\r\n", b'data: {"choices":[],"pad":"%s"}\n\n' % (b"x" * 2000)),
        raw(sized(bomb(), b"Content-Encoding: gzip\r\n")),
    ],
    ids=["huge-chunk-one-line", "huge-chunk-events", "gzip-bomb"],
)
async def test_memory_stays_near_the_cap_however_the_body_is_framed(
    first: Reply, servers: list[RawServer]
) -> None:
    server = RawServer(first, answer("two"))
    servers.append(server)
    url = await server.start() + "/v1"
    tracemalloc.start()
    try:
        got = await turns(server, url=url)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than 4 MB" in got[0] and got[1] == "two"
    assert peak < 3 * CAP, f"peak {peak / 2**20:.1f} MiB for a {CAP / 2**20:.1f} MiB cap"


async def test_only_retryable_statuses_are_retried_and_an_html_page_is_one_line(
    servers: list[RawServer],
) -> None:
    page = (
        b"<!DOCTYPE html>\n<html><head><title>501 Not Implemented</title>"
        b"<style>body{}</style></head>\n<body><h1>Not Implemented</h1>\n"
        + b"<p>The server does not support the action requested.</p>\n" * 50
        + b"</body></html>\n"
    )
    html = head(b"HTTP/1.1 501 Not Implemented", b"Content-Type: text/html; charset=utf-8")
    busy = sized(b"<html><body><h1>Service  Unavailable</h1> try later</body></html>", b"")
    server = RawServer(
        raw(html.replace(b"\r\n\r\n", b"\r\nContent-Length: %d\r\n\r\n" % len(page)) + page),
        raw(busy.replace(b"200 OK", b"503 Service Unavailable")),
        answer("two"),
    )
    servers.append(server)
    got = await turns(server, max_retries=3)
    assert got == ["error: OpenAI failed (HTTP 501): 501 Not Implemented", "two"]
    assert len(server.requests) == 3  # 501 once; 503 then its retry


async def test_a_stream_with_no_readable_event_is_an_error_naming_the_provider(
    servers: list[RawServer],
) -> None:
    role = b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
    server = RawServer(
        raw(sized(b"data: {not json\n\ndata: {also not\n\ndata: [DONE]\n\n")),
        raw(sized(role + b"data: {not json\n\ndata: [DONE]\n\n")),
        raw(sized(role + b"data: [DONE]\n\n")),
    )
    servers.append(server)
    got = await turns(server, count=3)
    assert got[0] == "error: OpenAI sent a response that could not be read: {not json {also not"
    assert got[1] == "error: OpenAI sent a stream with no readable event: {not json"
    assert got[2].startswith("error: OpenAI sent a stream with no readable event: data: {")


async def test_a_kept_connection_is_resent_once_only_when_no_answer_byte_came(
    servers: list[RawServer],
) -> None:
    server = RawServer(
        raw(sized(ONE), close=True),  # closed without saying so: the client kept it
        answer("two"),  # on a fresh connection
        raw(b"HTTP/1.1 200 OK\r\nContent-Le", close=True),  # part of a head, then gone
        answer("never asked for"),
    )
    servers.append(server)
    got = await turns(server, count=3, gap=0.1)
    assert got[:2] == ["one", "two"]
    assert got[2] == "error: OpenAI: the connection dropped mid-answer"
    assert len(server.requests) == 3 and server.connections == 2


async def test_credentials_in_the_url_become_basic_auth_and_are_never_logged(
    servers: list[RawServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = RawServer(answer("one"), raw(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    servers.append(server)
    base = await server.start()
    url = base.replace("http://", "http://me%40home:s3cret%2Fpass@") + "/v1"
    caplog.set_level(logging.DEBUG)
    adapter = OpenAICompatibleAdapter(AdapterSettings(name="openai_compatible", url=url, model="m"))
    try:
        events = await collect(adapter)
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["one"]
        with pytest.raises(AdapterError) as failed:
            await adapter.list_models()
    finally:
        await adapter.aclose()
    token = base64.b64encode(b"me@home:s3cret/pass").decode()
    assert b"\r\nauthorization: Basic %s\r\n" % token.encode() in server.requests[0]
    assert b"s3cret" not in server.requests[0].split(b"\r\n")[0]
    shown = caplog.text + str(failed.value)
    assert "s3cret" not in shown and token not in shown
    assert "me%40home:***@127.0.0.1" in shown


async def test_international_host_names_go_out_idna_encoded(
    servers: list[RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RawServer(answer("one"))
    servers.append(server)
    base = await server.start()
    port = int(base.rsplit(":", 1)[1])
    loop = asyncio.get_running_loop()
    resolve = loop.getaddrinfo
    asked: list[object] = []

    async def fake_dns(host: object, *args: object, **kwargs: object) -> object:
        asked.append(host)  # a small resolver: only this one name, to loopback
        return await resolve(
            "127.0.0.1" if host == "xn--bcher-kva.example" else host, *args, **kwargs
        )  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "getaddrinfo", fake_dns)
    assert await turns(server, count=1, url=f"http://Bücher.example:{port}/v1") == ["one"]
    assert asked == ["xn--bcher-kva.example"]
    assert b"\r\nhost: xn--bcher-kva.example:%d\r\n" % port in server.requests[0]
    with pytest.raises(ConnectFailed, match="not a valid domain name"):
        await FastClient().send("GET", "http://a\u200db.example/", {}, None, LIMITS)


MODELS = b'{"object":"list","data":[{"id":"model-a"},{"id":"model-b"}]}'


@pytest.mark.parametrize(
    "first",
    [
        head(
            b"HTTP/1.1 200 OK",
            b"Content-Length: %d" % len(MODELS),
            b"Content-Length: %d" % len(MODELS),
        )
        + MODELS,
        head(
            b"HTTP/1.1 200 OK",
            b"Content-Type: application/json",
            b"Content-Length: %d" % len(MODELS),
            sep=b"\n",
        )
        + MODELS,
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + sized(MODELS, b""),
        head(b"HTTP/1.0 200 OK", b"Content-Type: application/json") + MODELS,
    ],
    ids=["duplicate-content-length", "bare-lf", "early-hints", "http-1.0-until-close"],
)
async def test_the_model_list_is_read_to_its_end_at_once(
    first: bytes, servers: list[RawServer]
) -> None:
    server = RawServer(raw(first, close=first.startswith(b"HTTP/1.0")), raw(sized(MODELS, b"")))
    servers.append(server)
    url = await server.start() + "/v1"
    adapter = OpenAIAdapter(AdapterSettings(name="openai", url=url, api_key="k", read_timeout=30.0))
    try:
        for _ in range(2):
            models = await asyncio.wait_for(adapter.list_models(), QUICK)
            assert models == ["model-a", "model-b"]
    finally:
        await adapter.aclose()
