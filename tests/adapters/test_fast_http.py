"""The providers' HTTP/1.1 client against a real loopback socket server with scripted bytes:
chunked and sized bodies, what one read decodes comes as one piece, kept-alive connections
reused (and a stale one retried), cut bodies and silences as the client's failures, proxies left
to httpx, and httpx not imported by a direct connection."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from tests.support.chat import EchoTool, finish, make_chat
from tests.support.raw_server import RawServer, Reply, answer, raw
from tests.support.raw_server import sized as stream_sized

from codecompanion.adapters.base import AdapterSettings
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.transport.fast_http import FastClient, proxied, with_params
from codecompanion.transport.http_types import ConnectFailed, PeerBroke, TimedOut, Timeouts

LIMITS = Timeouts(connect=5.0, read=5.0, write=5.0)

Serve = Callable[[RawServer], Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[RawServer] = []

    async def start(server: RawServer) -> str:
        servers.append(server)
        return await server.start()

    yield start
    for server in servers:
        await server.close()


def chunked(*pieces: bytes, pause: float = 0.0) -> Reply:
    async def reply(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            if pause:
                await writer.drain()
                await asyncio.sleep(pause)
        writer.write(b"0\r\n\r\n")

    return reply


def sized(body: bytes, close: bool = False) -> Reply:
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


async def fetch(
    client: FastClient, url: str, method: str = "GET", limits: Timeouts = LIMITS
) -> list[bytes]:
    content = b'{"q":1}' if method == "POST" else None
    response = await client.send(method, url, {"Accept": "*/*"}, content, limits)
    try:
        assert response.status_code == 200
        return [piece async for piece in response.aiter_raw()]
    finally:
        await response.aclose()


async def test_chunks_one_read_brings_come_as_one_piece(serve: Serve) -> None:
    server = RawServer(chunked(*[b"data: %d\n\n" % i for i in range(50)]))
    url = await serve(server)
    client = FastClient()
    got = await fetch(client, url + "/v1/chat", "POST")
    await client.aclose()
    assert b"".join(got) == b"".join(b"data: %d\n\n" % i for i in range(50))
    assert len(got) < 5  # one piece per HTTP chunk would be 50
    assert server.requests[0].startswith(b"POST /v1/chat HTTP/1.1\r\n")
    assert b"\r\ncontent-length: 7\r\n" in server.requests[0]
    assert b"\r\nhost: 127.0.0.1:" in server.requests[0]
    assert server.requests[0].endswith(b'\r\n\r\n{"q":1}')


async def test_a_chunk_split_across_reads_is_joined(serve: Serve) -> None:
    server = RawServer(chunked(b"first", b"x" * 70_000, b"last", pause=0.02))
    url = await serve(server)
    client = FastClient()
    got = await fetch(client, url)
    await client.aclose()
    assert b"".join(got) == b"first" + b"x" * 70_000 + b"last"


async def test_kept_alive_connection_is_reused_and_a_closed_one_retried(serve: Serve) -> None:
    server = RawServer(sized(b"one"), sized(b"two", close=True), sized(b"three"))
    url = await serve(server)
    client = FastClient()
    assert await fetch(client, url) == [b"one"]
    assert await fetch(client, url) == [b"two"]  # same connection, then closed
    assert server.connections == 1
    assert await fetch(client, url) == [b"three"]  # a new one
    assert server.connections == 2
    await client.aclose()


async def test_a_stale_idle_connection_is_retried_on_a_fresh_one(serve: Serve) -> None:
    def close_after(writer: asyncio.StreamWriter) -> None:
        sized(b"one")(writer)
        writer.close()  # without saying so: the client keeps the connection idle

    server = RawServer(close_after, sized(b"two"))
    url = await serve(server)
    client = FastClient()
    assert await fetch(client, url) == [b"one"]
    await asyncio.sleep(0.05)
    assert await fetch(client, url) == [b"two"]
    await client.aclose()


async def test_cut_body_silence_and_refusal_are_failures(serve: Serve) -> None:
    async def silent(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await asyncio.sleep(1)

    url = await serve(RawServer(cut, silent))
    client = FastClient()
    with pytest.raises(PeerBroke):
        await fetch(client, url)
    with pytest.raises(TimedOut):
        await fetch(client, url, limits=Timeouts(connect=1.0, read=0.2, write=1.0))
    listening = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    listening.close()
    await listening.wait_closed()
    with pytest.raises(ConnectFailed):
        await fetch(client, f"http://127.0.0.1:{port}")
    await client.aclose()


@pytest.mark.parametrize(
    "url, headers",
    [
        ("ftp://127.0.0.1/x", {}),
        ("http://127.0.0.1:port/x", {}),
        ("http://127.0.0.1:9/x", {"X-Evil": "a\r\nInjected: yes"}),
        ("http://127.0.0.1:9/x", {"X-Name": "caf\u00e9 \u2603"}),
    ],
)
async def test_requests_http_cannot_carry_fail_before_any_byte_is_sent(
    url: str, headers: dict[str, str]
) -> None:
    with pytest.raises(ConnectFailed):
        await FastClient().send("GET", url, headers, None, LIMITS)


async def test_the_target_keeps_its_query_and_escapes_what_it_must(serve: Serve) -> None:
    server = RawServer(sized(b"ok"))
    url = await serve(server)
    client = FastClient()
    await fetch(client, with_params(url + "/v1/a b/\u00e9?x=1", {"key": "k&v"}))
    await client.aclose()
    assert server.requests[0].startswith(b"GET /v1/a%20b/%C3%A9?x=1&key=k%26v HTTP/1.1\r\n")


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
    assert not proxied()
    assert isinstance(OpenAIAdapter(settings).client(), FastClient)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert proxied()
    from codecompanion.transport.proxied_http import ProxiedClient

    routed = OpenAIAdapter(settings).client()
    assert isinstance(routed, ProxiedClient)
    assert routed.client._mounts  # httpx routes through the proxy from the environment
    assert not proxied({"no_proxy": "*", "HTTP_PROXY": "  "})


def test_a_direct_chat_never_imports_httpx() -> None:
    # httpx and what it pulls in (http.client, email, urllib.request) cost the host ~4 MB.
    code = (
        "import sys, asyncio\n"
        "from codecompanion.adapters import create_adapter\n"
        "from codecompanion.adapters.base import AdapterSettings\n"
        "a = create_adapter(AdapterSettings(name='openai', url='http://127.0.0.1:9/v1',"
        " api_key='k'))\n"
        "async def go():\n"
        "    try:\n"
        "        async for _ in a.stream([], []): pass\n"
        "    except Exception as exc: print(type(exc).__name__)\n"
        "asyncio.run(go())\n"
        "print(sorted(m for m in sys.modules if m == 'urllib.request' or m.split('.')[0] in"
        " ('httpx', 'http', 'email')))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.splitlines() == ["AdapterError", "[]"], done.stderr


async def test_behind_a_proxy_the_answer_streams_through_httpx(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.adapters import collect

    from codecompanion.adapters.base import Finish, TextDelta
    from codecompanion.errors import StreamInterrupted

    delta = b'data: {"choices":[{"index":0,"delta":{"content":"via proxy"}}]}\n\n'
    done = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    proxy = RawServer(sized(delta + done), cut)  # answers as the provider would, seen through it
    proxy_url = await serve(proxy)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    settings = AdapterSettings(name="openai", url="http://provider.invalid/v1", api_key="k")
    adapter = OpenAIAdapter(settings)
    assert await collect(adapter) == [TextDelta("via proxy"), Finish("stop")]
    # The proxy got the whole URL (httpx's proxy form), the key and the JSON body.
    head = proxy.requests[0].split(b"\r\n")
    assert head[0] == b"POST http://provider.invalid/v1/chat/completions HTTP/1.1"
    assert b"authorization: bearer k" in [line.lower() for line in head]
    with pytest.raises(StreamInterrupted, match="dropped mid-answer"):
        await collect(adapter)  # the cut body is the same failure as on a direct connection
    await adapter.aclose()


async def test_warming_opens_the_next_connection_where_the_last_was_closed(serve: Serve) -> None:
    server = RawServer(sized(b"one", close=True), sized(b"two"))
    url = await serve(server)
    client = FastClient()
    assert await fetch(client, url) == [b"one"]  # the server closed it
    await client.warm(5.0)
    await asyncio.sleep(0.05)
    assert (server.connections, len(server.requests)) == (2, 1)  # open, nothing sent yet
    await client.warm(5.0)  # one is idle there already: nothing opened
    assert await fetch(client, url) == [b"two"]
    assert server.connections == 2  # the warmed connection carried it
    await client.aclose()


TOOL_CALL = (
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
    b'"type":"function","function":{"name":"echo","arguments":"{}"}}]}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)


async def test_a_tool_round_opens_the_next_requests_connection_while_it_runs(
    serve: Serve,
) -> None:
    server = RawServer(raw(stream_sized(TOOL_CALL), close=True), answer("done"))
    url = await serve(server)
    seen: list[tuple[int, int]] = []

    async def watching(_name: str, _args: dict[str, Any]) -> None:
        for _ in range(200):  # the connection opens while the round runs
            if server.connections == 2:
                break
            await asyncio.sleep(0.01)
        seen.append((server.connections, len(server.requests)))

    settings = AdapterSettings(name="openai", url=url + "/v1", api_key="k", model="m")
    adapter = OpenAIAdapter(settings)
    chat, _view = make_chat(adapter, tools=EchoTool(before=watching))
    assert chat.submit("go")
    await finish(chat)
    assert seen == [(2, 1)]  # opened before the results went back
    assert len(server.requests) == 2 and server.connections == 2  # and it carried them
    await adapter.aclose()
