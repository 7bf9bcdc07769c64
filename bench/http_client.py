"""`python -m bench.http_client`: the providers' HTTP client beside httpx, in one run.

Measures, in this process's CPU time (the server runs in a child process, so its work is not
counted): 10,000 SSE events of an OpenAI stream read through the OpenAI adapter (one HTTP chunk
per event), the same events trickled (one per socket read, as a model streams them), and small
keep-alive requests (a 60-byte JSON body each) on one kept connection. Each
figure is the median of `--runs` runs, for our client and for httpx (`proxied_http`'s client,
here without a proxy); the ratio ours / httpx is what to compare between runs on a loaded
machine. Also: what importing each client adds to a fresh interpreter (traced by tracemalloc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENTS = 10_000
TRICKLED = 1_000
TRICKLE_GAP = 0.0003  # seconds between trickled events: each comes in a read of its own
SMALL = 1_000
SMALL_BODY = b'{"object":"list","data":[{"id":"model-a"},{"id":"model-b"}]}'


def _sse_chunks(count: int) -> list[bytes]:
    """`count` OpenAI chunks, one HTTP chunk each, then the finish, [DONE] and the last chunk."""
    out = []
    for i in range(count):
        delta = json.dumps({"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]})
        event = f"data: {delta}\n\n".encode()
        out.append(b"%x\r\n%s\r\n" % (len(event), event))
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    out.append(b"%x\r\n%s\r\n0\r\n\r\n" % (len(end), end))
    return out


async def _serve() -> None:
    """The child process: answers POSTs with the stream and GETs with a small body, kept alive."""
    stream = b"".join(_sse_chunks(EVENTS))
    trickled = _sse_chunks(TRICKLED)
    sse_head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    small = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                if head.startswith(b"POST /trickle/"):
                    writer.write(sse_head)
                    for piece in trickled:
                        writer.write(piece)
                        await writer.drain()
                        await asyncio.sleep(TRICKLE_GAP)
                elif head.startswith(b"POST"):
                    writer.write(sse_head + stream)
                else:
                    writer.write(small % (len(SMALL_BODY), SMALL_BODY))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(3600)


def _cpu(step: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[float]]:
    async def timed() -> float:
        began = time.process_time()
        await step()
        return time.process_time() - began

    return timed


async def _measure(url: str, client_name: str, runs: int) -> dict[str, float]:
    from codecompanion.adapters.base import AdapterSettings, TextDelta
    from codecompanion.adapters.openai import OpenAIAdapter
    from codecompanion.messages import Message
    from codecompanion.transport.fast_http import FastClient
    from codecompanion.transport.http_types import HTTPClient, Timeouts

    client: HTTPClient
    if client_name == "ours":
        client = FastClient()
    else:
        from codecompanion.transport.proxied_http import ProxiedClient

        client = ProxiedClient(None, plain=True)
    settings = AdapterSettings(name="openai", url=url + "/v1", api_key="k", model="m")
    adapter = OpenAIAdapter(settings, http_client=client)
    slow = OpenAIAdapter(replace(settings, url=url + "/trickle/v1"), http_client=client)
    history = [Message(role="user", content="hi")]
    limits = Timeouts(connect=5.0, read=5.0, write=5.0)

    async def read(adapter: OpenAIAdapter, count: int) -> None:
        texts = 0
        async for event in adapter.stream(history, []):
            texts += isinstance(event, TextDelta)
        assert texts == count, texts

    async def stream() -> None:
        await read(adapter, EVENTS)

    async def trickle() -> None:
        await read(slow, TRICKLED)

    async def small() -> None:
        for _ in range(SMALL):
            response = await client.send("GET", url + "/small", {}, None, limits)
            body = b"".join([piece async for piece in response.aiter_raw()])
            await response.aclose()
            assert body == SMALL_BODY

    await stream()  # warm up: connection, imports
    await small()
    sse = [await _cpu(stream)() for _ in range(runs)]
    trickled = [await _cpu(trickle)() for _ in range(runs)]
    req = [await _cpu(small)() for _ in range(runs)]
    await adapter.aclose()
    return {
        "sse_s_per_10k": statistics.median(sse),
        "trickled_us": statistics.median(trickled) / TRICKLED * 1e6,
        "request_ms": statistics.median(req) / SMALL * 1000,
    }


def _import_cost(modules: str) -> float:
    """MiB that importing `modules` takes in a fresh interpreter (traced by tracemalloc)."""
    code = (
        "import tracemalloc\n"
        "tracemalloc.start()\n"
        f"import {modules}\n"
        "print(tracemalloc.get_traced_memory()[0] / 2**20)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "rplugin" / "python3")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return float(out.stdout.strip() or "nan")


def main(argv: list[str] | None = None) -> int:
    """Print the figures for both clients and their ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench.http_client", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="measured runs per figure (5)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve())
        return 0
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    os.environ.clear()
    os.environ.update(env)
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.http_client", "--serve"], stdout=subprocess.PIPE, cwd=ROOT
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        figures = {name: asyncio.run(_measure(url, name, args.runs)) for name in ("ours", "httpx")}
    finally:
        server.terminate()
        server.wait()
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for key, label in (
        ("sse_s_per_10k", "CPU s per 10,000 SSE events"),
        ("trickled_us", "CPU us per SSE event, one per socket read"),
        ("request_ms", "CPU ms per small keep-alive request"),
    ):
        ours, theirs = figures["ours"][key], figures["httpx"][key]
        print(f"{label}: ours {ours:.4f}, httpx {theirs:.4f}, ours/httpx {ours / theirs:.2f}")
    direct = _import_cost("codecompanion.adapters.openai")
    proxied = _import_cost("codecompanion.adapters.openai, codecompanion.transport.proxied_http")
    print(f"import MiB (traced): OpenAI adapter {direct:.2f}, with httpx's client {proxied:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
