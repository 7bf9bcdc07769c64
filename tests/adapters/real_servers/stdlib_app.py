"""Python's own `http.server` serving a folder (as `python -m http.server` does), on an
inherited listening fd: HTTP/1.0, files for GET, its HTML 501 page for POST."""

from __future__ import annotations

import functools
import http.server
import socket
import sys


def main() -> None:
    """Serve the folder named by the second argument on the fd named by the first."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
    server = http.server.HTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=int(sys.argv[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
