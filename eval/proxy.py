"""A recording proxy between a plugin and the model's server: what each request cost.

Both plugins talk to the server through it, so every figure is read the same way: the prompt
tokens the server evaluated and took from its cache (llama-server's `timings`, else the OpenAI
`usage`), the time to the first generated token, and the request's size. It also sets the same
sampling (`temperature`, `seed`) on every request, so neither plugin's defaults decide.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

UPSTREAM_TIMEOUT_S = 1800.0


@dataclass
class Exchange:
    """One request to the model and what its answer cost."""

    path: str
    request_bytes: int
    messages: int
    tools: int
    status: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generated_tokens: int = 0
    first_token_s: float | None = None
    wall_s: float = 0.0
    native_calls: int = 0
    error: str = ""
    tool_choice: str = ""  # as the plugin sent it ("" when none)
    constrained: bool = False  # the answer was held to a schema (response_format sent)

    def to_json(self) -> dict[str, Any]:
        """The exchange as a JSON object."""
        return dict(self.__dict__)


@dataclass
class Sampling:
    """What the proxy sets on every chat request (None: left as the plugin sent it)."""

    temperature: float | None = None
    seed: int | None = None


@dataclass
class _Log:
    exchanges: list[Exchange] = field(default_factory=list)
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _usage(exchange: Exchange, event: dict[str, Any]) -> None:
    """Read llama-server's timings (exact, with the cache) or the OpenAI usage."""
    timings = event.get("timings")
    if isinstance(timings, dict) and "prompt_n" in timings:
        exchange.prompt_tokens = int(timings.get("prompt_n") or 0)
        exchange.cached_tokens = int(timings.get("cache_n") or 0)
        exchange.generated_tokens = int(timings.get("predicted_n") or 0)
        return
    usage = event.get("usage")
    if isinstance(usage, dict) and not exchange.prompt_tokens:
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        exchange.prompt_tokens = int(usage.get("prompt_tokens") or 0) - cached
        exchange.cached_tokens = cached
        exchange.generated_tokens = int(usage.get("completion_tokens") or 0)


def _read_event(exchange: Exchange, event: dict[str, Any], began: float) -> None:
    """One streamed chunk (or a whole answer): first token, native calls, usage."""
    for choice in event.get("choices") or []:
        delta = choice.get("delta") or choice.get("message") or {}
        produced = delta.get("content") or delta.get("tool_calls") or delta.get("reasoning_content")
        if produced and exchange.first_token_s is None:
            exchange.first_token_s = time.monotonic() - began
        for call in delta.get("tool_calls") or []:
            if (call.get("function") or {}).get("name"):
                exchange.native_calls += 1
    _usage(exchange, event)


class _SSEReader:
    """Feeds the `data:` lines of a streamed answer to _read_event as they arrive."""

    def __init__(self, exchange: Exchange, began: float) -> None:
        self.exchange = exchange
        self.began = began
        self.pending = b""

    def feed(self, data: bytes) -> None:
        self.pending += data
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                continue
            try:
                event = json.loads(payload)
            except ValueError:
                continue
            if isinstance(event, dict):
                _read_event(self.exchange, event, self.began)


class RecordingProxy:
    """Serves on 127.0.0.1 and forwards every request to `upstream`, recording chat requests."""

    def __init__(
        self, upstream: str, sampling: Sampling | None = None, dump: Path | None = None
    ) -> None:
        """`dump`: a folder where each chat request's body is written as sent upstream."""
        self.dump = dump
        parts = urlsplit(upstream)
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.sampling = sampling or Sampling()
        self._log = _Log()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port the plugins are pointed at."""
        return int(self._server.server_address[1])

    def start(self) -> RecordingProxy:
        """Start serving in a thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[Exchange]:
        """The chat requests recorded since the last call, and a fresh log."""
        with self._log.lock:
            taken, self._log.exchanges = self._log.exchanges, []
        return taken

    def connect(self) -> http.client.HTTPConnection:
        """A new connection to the model's server."""
        if self.https:
            return http.client.HTTPSConnection(
                self.upstream_host, self.upstream_port, timeout=UPSTREAM_TIMEOUT_S
            )
        return http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=UPSTREAM_TIMEOUT_S
        )

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request with the proxy's sampling set."""
        if self.sampling.temperature is not None:
            body["temperature"] = self.sampling.temperature
        if self.sampling.seed is not None:
            body["seed"] = self.sampling.seed
        return body

    def record(self, exchange: Exchange, sent: bytes) -> None:
        """Keep one chat request as it starts (and its body, when dumping)."""
        with self._log.lock:
            self._log.exchanges.append(exchange)
            self._log.count += 1
            count = self._log.count
        if self.dump is not None:
            self.dump.mkdir(parents=True, exist_ok=True)
            (self.dump / f"{time.strftime('%H%M%S')}-{count:04}.json").write_bytes(sent)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: RecordingProxy


_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the records say what happened."""

    def do_GET(self) -> None:
        self._forward(b"", None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if not isinstance(body, dict) or "messages" not in body:
            self._forward(raw, None)
            return
        body = self.server.proxy.rewrite(body)
        sent = json.dumps(body).encode()
        exchange = Exchange(
            self.path, len(sent), len(body.get("messages") or []), len(body.get("tools") or [])
        )
        choice = body.get("tool_choice")
        if choice is not None:
            exchange.tool_choice = choice if isinstance(choice, str) else json.dumps(choice)
        exchange.constrained = "response_format" in body
        # Recorded as it starts: a request still out when a run ends (stopped, timed out) is in
        # the run's record too, with status 0.
        self.server.proxy.record(exchange, sent)
        self._forward(sent, exchange)

    def _forward(self, body: bytes, exchange: Exchange | None) -> None:
        """Send the request upstream and relay the answer as it arrives (then close)."""
        began = time.monotonic()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        headers["Content-Length"] = str(len(body))
        upstream = self.server.proxy.connect()
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            answer = upstream.getresponse()
            self._relay(answer, exchange, began)
        except (OSError, http.client.HTTPException) as exc:
            if exchange is not None:
                exchange.error = f"{type(exc).__name__}: {exc}"
            self.close_connection = True
        finally:
            upstream.close()
            if exchange is not None:
                exchange.wall_s = time.monotonic() - began

    def _relay(
        self, answer: http.client.HTTPResponse, exchange: Exchange | None, began: float
    ) -> None:
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in _HOP:
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        reader = _SSEReader(exchange, began) if exchange is not None else None
        whole = b""
        streamed = "event-stream" in (answer.getheader("Content-Type") or "")
        while chunk := answer.read1(65536):
            self.wfile.write(chunk)
            self.wfile.flush()
            if reader is not None and streamed:
                reader.feed(chunk)
            elif exchange is not None:
                whole += chunk
        if exchange is None:
            return
        exchange.status = answer.status
        if reader is not None and streamed:
            reader.feed(b"\n")
        elif whole:
            self._read_whole(exchange, whole, began)

    @staticmethod
    def _read_whole(exchange: Exchange, whole: bytes, began: float) -> None:
        try:
            event = json.loads(whole)
        except ValueError:
            exchange.error = whole[:200].decode("utf-8", "replace")
            return
        if isinstance(event, dict):
            _read_event(exchange, event, began)
            if exchange.status >= 400:
                exchange.error = json.dumps(event)[:300]
