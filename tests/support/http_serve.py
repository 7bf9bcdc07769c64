"""A loopback stdlib HTTP(S) server around a handler class, for tests that need real sockets."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serve(
    handler: type[http.server.BaseHTTPRequestHandler], tls: ssl.SSLContext | None = None
) -> Iterator[str]:
    """The server's base URL (`http://` or, with a server-side `tls` context, `https://`)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
