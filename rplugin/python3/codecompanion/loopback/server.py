"""A scripted fake LLM provider on 127.0.0.1: tests, the offline demo and the bench talk to it.

Standard library only. POST requests (any path) are answered from a FIFO of scripted `Turn`s;
streaming bodies use HTTP/1.1 chunked transfer, one flushed chunk per scripted piece, and the
connection is kept alive between turns so a pooled client reuses it.
"""

from __future__ import annotations

import collections
import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .turns import Turn, detect_format, openai_text, openai_tool_calls

DEFAULT_MODELS: tuple[str, ...] = ("test-model", "test-model-large")

__all__ = [
    "DEFAULT_MODELS",
    "LoopbackServer",
    "RecordedRequest",
    "Turn",
    "detect_format",
    "openai_text",
    "openai_tool_calls",
]


@dataclass
class RecordedRequest:
    """One request the server received (header names lower-cased)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    arrived: float = field(default_factory=time.monotonic)
    connection: int = 0
    reused: bool = False

    def json(self) -> Any:
        """The body, which must have been a JSON document."""
        if isinstance(self.body, str):
            raise ValueError(f"request body is not JSON: {self.body[:80]!r}")
        return self.body


class LoopbackServer:
    """A fake provider on 127.0.0.1 that serves scripted turns and records every request."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, models: Sequence[str] = DEFAULT_MODELS
    ) -> None:
        self.host = host
        self.port = port
        self.models = list(models)
        self.requests: list[RecordedRequest] = []
        self.connections = 0
        self._paths: dict[str, collections.deque[Turn]] = {}  # turns for one path only
        self._queues: dict[str, collections.deque[Turn]] = {
            "POST": collections.deque(),
            "GET": collections.deque(),
        }
        self._default: Turn | None = None
        self._responder: Callable[[RecordedRequest], Turn] | None = None
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL, e.g. http://127.0.0.1:PORT."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> LoopbackServer:
        """Bind and serve in a daemon thread."""
        server = _Server((self.host, self.port), _Handler)
        server.owner = self
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection."""
        self._stopping.set()
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with self._cond:
            open_sockets = list(self._sockets)
        for sock in open_sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *turns: Turn, method: str = "POST", path: str | None = None) -> None:
        """Script the next answers to `method` requests (any path, or only `path`), served
        first in, first out."""
        with self._cond:
            if path is not None:
                self._paths.setdefault(path, collections.deque()).extend(turns)
            else:
                self._queues[method.upper()].extend(turns)

    def set_responder(self, responder: Callable[[RecordedRequest], Turn] | None) -> None:
        """Answer POST requests from their content when the queue is empty (before the default)."""
        with self._cond:
            self._responder = responder

    def set_default(self, turn: Turn | None) -> None:
        """The answer to POST requests once the queue is empty (None: a 500 error)."""
        with self._cond:
            self._default = turn

    def pending(self) -> int:
        """How many scripted POST turns are still queued."""
        with self._cond:
            return len(self._queues["POST"])

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[RecordedRequest]:
        """Block until at least `n` requests arrived; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests, got {len(self.requests)}")
            return list(self.requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()

    def _next_turn(self, method: str, path: str, request: RecordedRequest) -> Turn:
        with self._cond:
            by_path = self._paths.get(path)
            if by_path:
                return by_path.popleft()
            if path.endswith("/api/show"):
                # Ollama's model details, asked beside the chat: a model that reports nothing.
                return Turn.json({})
            queue = self._queues.get(method)
            if queue:
                return queue.popleft()
            responder = self._responder if method == "POST" else None
            default = self._default if method == "POST" else None
        if responder is not None:
            return responder(request)
        if default is not None:
            return default
        if method == "GET":
            return self._builtin_get(path)
        return Turn.json(
            {"error": {"message": "loopback: no scripted turn left", "code": 500}}, 500
        )

    def _builtin_get(self, path: str) -> Turn:
        if path.endswith("/api/tags"):
            return Turn.json({"models": [{"name": m, "model": m} for m in self.models]})
        if path.endswith("/models"):
            return Turn.json(
                {
                    "object": "list",
                    "data": [{"id": m, "object": "model"} for m in self.models],
                    "models": [{"name": f"models/{m}"} for m in self.models],
                }
            )
        return Turn.error(404, f"loopback: nothing at {path}")

    def _register(self, sock: socket.socket, add: bool) -> int:
        with self._cond:
            if add:
                self._sockets.add(sock)
                self.connections += 1
                return self.connections
            self._sockets.discard(sock)
            return 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-answer is a scripted scenario, not a server failure.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection_id = self.server.owner._register(self.connection, add=True)
        self.served = 0

    def finish(self) -> None:
        self.server.owner._register(self.connection, add=False)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        owner = self.server.owner
        split = urlsplit(self.path)
        raw = self._read_body()
        request = RecordedRequest(
            method=self.command,
            path=split.path,
            query=dict(parse_qsl(split.query)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=_decode_body(raw),
            connection=self.connection_id,
            reused=self.served > 0,
        )
        owner._record(request)
        self.served += 1
        self._send(owner._next_turn(self.command, split.path, request), owner._stopping)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, turn: Turn, stopping: threading.Event) -> None:
        if turn.stall and stopping.wait(turn.stall):
            return
        streamed = bool(
            turn.drop_after is not None or len(turn.body_chunks) > 1 or turn.delay > 0 or turn.hold
        )
        self._head(turn, streamed)
        if not self._body(turn, streamed, stopping):
            return
        if turn.hold:
            self.wfile.flush()
            stopping.wait(turn.hold)
            self._drop()
        elif turn.drop_after is not None:
            self._drop()
        elif streamed:
            self.wfile.write(b"0\r\n\r\n")

    def _head(self, turn: Turn, streamed: bool) -> None:
        """The status line and headers: chunked when the body comes in pieces."""
        self.send_response(turn.status)
        for name, value in turn.headers.items():
            self.send_header(name, value)
        if streamed:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(sum(map(len, turn.body_chunks))))
        self.end_headers()

    def _body(self, turn: Turn, streamed: bool, stopping: threading.Event) -> bool:
        """Write the body's chunks; False when the turn dropped or the server is stopping."""
        for index, chunk in enumerate(turn.body_chunks):
            if turn.drop_after is not None and index >= turn.drop_after:
                self._drop()
                return False
            if index and turn.delay and stopping.wait(turn.delay):
                return False
            if streamed:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            else:
                self.wfile.write(chunk)
        return True

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _decode_body(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
