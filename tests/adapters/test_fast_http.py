"""The providers' HTTP/1.1 transport against a real loopback socket server with scripted bytes:
chunked and sized bodies, what one read decodes comes as one piece, kept-alive connections
reused (and a stale one retried), cut bodies and silences as httpx's errors, proxies left to
httpx."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from codecompanion.adapters.base import AdapterSettings
from codecompanion.adapters.fast_http import FastTransport
from codecompanion.adapters.openai import OpenAIAdapter

Serve = Callable[["Server"], Awaitable[str]]


class Server:
    """Answers each request on a connection with the next scripted reply (a coroutine)."""

    def __init__(self, *replies: Callable[[asyncio.StreamWriter], object]) -> None:
        self.replies = list(replies)
        self.connections = 0
        self.requests: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                outcome = self.replies.pop(0)(writer)
                if asyncio.iscoroutine(outcome):
                    await outcome
                await writer.drain()
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[asyncio.AbstractServer] = []

    async def start(server: Server) -> str:
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        servers.append(listening)
        port = listening.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield start
    for listening in servers:
        listening.close()


def chunked(*pieces: bytes, pause: float = 0.0) -> Callable[[asyncio.StreamWriter], object]:
    async def reply(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            if pause:
                await writer.drain()
                await asyncio.sleep(pause)
        writer.write(b"0\r\n\r\n")

    return reply


def sized(body: bytes, close: bool = False) -> Callable[[asyncio.StreamWriter], object]:
    def reply(writer: asyncio.StreamWriter) -> None:
        extra = b"Connection: close\r\n" if close else b""
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)
        )
        if close:
            writer.close()

    return reply


def cut(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
    writer.close()


async def pieces(client: httpx.AsyncClient, url: str) -> list[bytes]:
    async with client.stream("POST", url, json={"q": 1}) as response:
        assert response.status_code == 200
        return [piece async for piece in response.aiter_raw()]


async def test_chunks_one_read_brings_come_as_one_piece(serve: Serve) -> None:
    server = Server(chunked(*[b"data: %d\n\n" % i for i in range(50)]))
    url = await serve(server)
    async with httpx.AsyncClient(transport=FastTransport()) as client:
        got = await pieces(client, url + "/v1/chat")
    assert b"".join(got) == b"".join(b"data: %d\n\n" % i for i in range(50))
    assert len(got) < 5  # httpx's own transport yields 50
    assert server.requests[0].startswith(b"POST /v1/chat HTTP/1.1\r\n")
    assert server.requests[0].endswith(b'{"q":1}')


async def test_a_chunk_split_across_reads_is_joined(serve: Serve) -> None:
    server = Server(chunked(b"first", b"x" * 70_000, b"last", pause=0.02))
    url = await serve(server)
    async with httpx.AsyncClient(transport=FastTransport()) as client:
        got = await pieces(client, url)
    assert b"".join(got) == b"first" + b"x" * 70_000 + b"last"


async def test_kept_alive_connection_is_reused_and_a_closed_one_retried(serve: Serve) -> None:
    server = Server(sized(b"one"), sized(b"two", close=True), sized(b"three"))
    url = await serve(server)
    async with httpx.AsyncClient(transport=FastTransport()) as client:
        assert (await client.get(url)).content == b"one"
        assert (await client.get(url)).content == b"two"  # same connection, then closed
        assert server.connections == 1
        assert (await client.get(url)).content == b"three"  # a new one
        assert server.connections == 2


async def test_a_stale_idle_connection_is_retried_on_a_fresh_one(serve: Serve) -> None:
    def close_after(writer: asyncio.StreamWriter) -> None:
        sized(b"one")(writer)
        writer.close()  # without saying so: the client keeps the connection idle

    server = Server(close_after, sized(b"two"))
    url = await serve(server)
    async with httpx.AsyncClient(transport=FastTransport()) as client:
        assert (await client.get(url)).content == b"one"
        await asyncio.sleep(0.05)
        assert (await client.get(url)).content == b"two"


async def test_cut_body_silence_and_refusal_are_httpx_errors(serve: Serve) -> None:
    async def silent(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await asyncio.sleep(1)

    url = await serve(Server(cut, silent))
    timeout = httpx.Timeout(0.2, connect=1.0)
    async with httpx.AsyncClient(transport=FastTransport(), timeout=timeout) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(url)
        with pytest.raises(httpx.ReadTimeout):
            await pieces(client, url)
    listening = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    listening.close()
    await listening.wait_closed()
    async with httpx.AsyncClient(transport=FastTransport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}")


def test_adapters_leave_proxied_requests_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = AdapterSettings(name="openai", url="http://127.0.0.1:9/v1", api_key="k")
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    direct = OpenAIAdapter(settings).client()
    assert isinstance(direct._transport, FastTransport)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    proxied = OpenAIAdapter(settings).client()
    assert not isinstance(proxied._transport, FastTransport)
    assert proxied._mounts  # httpx routes through the proxy from the environment
