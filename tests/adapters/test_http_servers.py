"""The providers' HTTP client against real HTTP servers nobody here wrote: uvicorn (with h11 and
with httptools), hypercorn, aiohttp and Node's `http` (where `node` is installed). Each answers
streamed turns (kept-alive connection), the model list, a gzip body, a 503 then an answer, a 501
HTML page, and on Node 103 Early Hints + 100 Continue before the answer. Python's `http.server`
serves files over HTTP/1.0 and answers a POST with its HTML 501 page."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.adapters import collect

from codecompanion.adapters.base import AdapterSettings, TextDelta
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.errors import AdapterError
from codecompanion.messages import Message
from codecompanion.transport import fast_http
from codecompanion.transport.fast_http import FastClient
from codecompanion.transport.http_connection import Connection, connect
from codecompanion.transport.http_types import Timeouts

HERE = Path(__file__).resolve().parent / "real_servers"
QUICK = 10.0  # seconds a turn may take (a fresh server's first answer included)
LIMITS = Timeouts(connect=5.0, read=10.0, write=5.0)
MODELS = b'{"object":"list","data":[{"id":"model-a"},{"id":"model-b"}]}'


def _command(name: str, fd: int) -> list[str] | None:
    python = [sys.executable, "-m"]
    quiet = ["--log-level", "warning"]
    commands = {
        "uvicorn-h11": python + ["uvicorn", "--fd", str(fd), "--http", "h11", *quiet],
        "uvicorn-httptools": python + ["uvicorn", "--fd", str(fd), "--http", "httptools", *quiet],
        "hypercorn": python + ["hypercorn", "--bind", f"fd://{fd}", "--log-level", "warning"],
    }
    if name in commands:
        tail = ["--no-access-log"] if name.startswith("uvicorn") else []
        return [*commands[name], *tail, "asgi_app:app"]
    if name == "aiohttp":
        return [sys.executable, str(HERE / "aiohttp_app.py"), str(fd)]
    node = shutil.which("node")
    return [node, str(HERE / "node_app.js"), str(fd)] if node else None


SERVERS = ["uvicorn-h11", "uvicorn-httptools", "hypercorn", "aiohttp", "node"]


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(name, base URL) of a running server, listening on a socket made here (no port race)."""
    name = request.param
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    command = _command(name, listener.fileno())
    if command is None:
        listener.close()
        pytest.skip(f"{name}: not installed")
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    process = subprocess.Popen(command, pass_fds=[listener.fileno()], env=env, cwd=HERE)
    port = listener.getsockname()[1]
    listener.close()  # the server holds its own copy
    try:
        yield name, f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def adapter(base: str, mode: str) -> OpenAIAdapter:
    settings = AdapterSettings(
        name="openai",
        url=f"{base}/{mode}/v1",
        api_key="k",
        model="m",
        read_timeout=30.0,
        retry_backoff=0.01,
    )
    return OpenAIAdapter(settings)


async def ask(client: OpenAIAdapter, question: str) -> str:
    began = time.monotonic()
    history = [Message(role="user", content=question)]
    events = await asyncio.wait_for(collect(client, history), QUICK)
    assert time.monotonic() - began < QUICK
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_each_turn_gets_its_own_answer_on_a_kept_connection(
    server: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, base = server
    opened: list[object] = []

    async def counted(*args: Any) -> Connection:
        opened.append(args[0])
        return await connect(*args)

    monkeypatch.setattr(fast_http, "connect", counted)
    modes = ["ok", "gzip", "hints"] if name == "node" else ["ok", "gzip"]
    for mode in modes:
        client = adapter(base, mode)
        try:
            for turn in ("q1", "q2", "q3"):
                assert await ask(client, f"{mode} {turn}") == f"answer to {mode} {turn}"
            assert await asyncio.wait_for(client.list_models(), QUICK) == ["model-a", "model-b"]
        finally:
            await client.aclose()
    assert len(opened) == len(modes)  # one connection carried each adapter's four requests


async def test_a_503_is_retried_and_a_501_page_is_one_line_not_retried(
    server: tuple[str, str],
) -> None:
    _name, base = server
    busy, html = adapter(base, "busy"), adapter(base, "html")
    try:
        assert await ask(busy, "again") == "answer to again"
        with pytest.raises(AdapterError) as failed:
            await ask(html, "anything")
        assert str(failed.value) == "OpenAI failed (HTTP 501): 501 Not Implemented"
        counts = await hits_of(busy)
        assert counts["busy"] == 2 and counts["html"] == 1
    finally:
        await busy.aclose()
        await html.aclose()


async def hits_of(client: OpenAIAdapter) -> dict[str, int]:
    """How often the server was asked on each path (its /stats answer)."""
    base = client.base_url.rsplit("/", 2)[0]
    fetcher = FastClient()
    try:
        response = await fetcher.send("GET", base + "/stats", {}, None, LIMITS)
        body = b"".join([piece async for piece in response.aiter_raw()])
        await response.aclose()
    finally:
        await fetcher.aclose()
    return {str(k): int(v) for k, v in json.loads(body).items()}


async def test_python_http_server_files_and_its_501_page(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_bytes(MODELS)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    fd = listener.fileno()
    command = [sys.executable, str(HERE / "stdlib_app.py"), str(fd), str(tmp_path)]
    process = subprocess.Popen(command, pass_fds=[fd], stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    client = OpenAIAdapter(
        AdapterSettings(name="openai", url=base + "/v1", api_key="k", model="m", retry_backoff=0.01)
    )
    try:
        for _ in range(2):  # HTTP/1.0: a connection per request
            assert await asyncio.wait_for(client.list_models(), QUICK) == ["model-a", "model-b"]
        with pytest.raises(AdapterError) as failed:
            await ask(client, "anything")
    finally:
        await client.aclose()
        process.terminate()
        _out, log = process.communicate(timeout=10)
    assert str(failed.value) == (
        "OpenAI failed (HTTP 501): Error response Error code: 501 Message: Unsupported method"
        " ('POST'). Error code explanation: 501 - Server does not supp…"
    )
    assert log.count('"POST ') == 1  # not retried
