"""The test provider as an ASGI app (served by uvicorn, with h11 or httptools, and hypercorn).

The first part of the path picks the behaviour: `ok`, `gzip` (one gzip-encoded body), `busy`
(503 once, then ok), `html` (a 501 HTML page); `/stats/...` returns how often each was asked.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from answers import MODELS, PAGE, events

HITS: Counter[str] = Counter()

Send = Callable[[dict[str, Any]], Awaitable[None]]


async def _whole(send: Send, status: int, kind: bytes, body: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(
    scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], send: Send
) -> None:
    """Answer one request."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    mode = scope["path"].split("/")[1]
    HITS[mode] += 1
    if mode == "stats":
        await _whole(send, 200, b"application/json", json.dumps(HITS).encode())
    elif scope["path"].endswith("/models"):
        await _whole(send, 200, b"application/json", MODELS)
    elif mode == "html":
        await _whole(send, 501, b"text/html; charset=utf-8", PAGE)
    elif mode == "busy" and HITS[mode] == 1:
        await _whole(send, 503, b"application/json", b'{"error":{"message":"busy"}}')
    elif mode == "gzip":
        packed = gzip.compress(b"".join(events(body)))
        headers = [(b"content-type", b"text/event-stream"), (b"content-encoding", b"gzip")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": packed})
    else:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in events(body):
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
