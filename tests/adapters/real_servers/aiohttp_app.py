"""The test provider on aiohttp's server (same paths as asgi_app), listening on an inherited fd."""

from __future__ import annotations

import gzip
import json
import socket
import sys
from collections import Counter

from aiohttp import web
from answers import MODELS, PAGE, events

HITS: Counter[str] = Counter()


async def handle(request: web.Request) -> web.StreamResponse:
    """Answer one request."""
    body = await request.read()
    mode = request.path.split("/")[1]
    HITS[mode] += 1
    if mode == "stats":
        return web.Response(body=json.dumps(HITS).encode(), content_type="application/json")
    if request.path.endswith("/models"):
        return web.Response(body=MODELS, content_type="application/json")
    if mode == "html":
        return web.Response(status=501, body=PAGE, content_type="text/html")
    if mode == "busy" and HITS[mode] == 1:
        return web.Response(status=503, body=b'{"error":{"message":"busy"}}')
    if mode == "gzip":
        packed = gzip.compress(b"".join(events(body)))
        headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        return web.Response(body=packed, headers=headers)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    for event in events(body):
        await response.write(event)
    await response.write_eof()
    return response


def main() -> None:
    """Serve on the listening socket whose fd is the first argument."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    sock = socket.socket(fileno=int(sys.argv[1]))
    web.run_app(app, sock=sock, print=None, access_log=None)


if __name__ == "__main__":
    main()
