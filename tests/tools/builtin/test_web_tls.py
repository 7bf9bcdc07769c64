"""The web tools connect with the host's TLS context (tls.py): a private CA in SSL_CERT_FILE is
trusted, a certificate nothing trusts is refused, and the context is built once, off the loop."""

from __future__ import annotations

import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from codecompanion.messages import ToolCall
from codecompanion.tools.builtin import fetch_webpage, web_search
from codecompanion.tools.runtime.system import ToolSystem
from codecompanion.transport.tls import LazyContext, build_trust
from tests.support.builtin import FakeTools, run_tool
from tests.support.fakes import RecordingChat
from tests.support.http_serve import serve
from tests.support.tools import builtin_system


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def bundle(ca: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "corp.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


@pytest.fixture
def https_url(ca: trustme.CA) -> Iterator[str]:
    """A loopback HTTPS server whose certificate only the private CA signs."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self._answer(b"private page", "text/plain")

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            result = {"title": "Found", "url": "https://example.com/", "content": "over TLS"}
            self._answer(json.dumps({"results": [result]}).encode(), "application/json")

        def log_message(self, *args: object) -> None:
            pass

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    with serve(Handler, context) as url:
        yield url


@pytest.fixture(autouse=True)
def no_env_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx alone would read these: each test sets what it means to trust."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


async def test_fetch_trusts_the_hosts_context(
    tools: FakeTools, https_url: str, bundle: Path
) -> None:
    tools.tls = build_trust({"SSL_CERT_FILE": str(bundle)}).context
    out = await run_tool(fetch_webpage, {"url": https_url}, tools)
    assert out.status == "success", out.for_llm
    assert "private page" in out.for_llm


async def test_fetch_refuses_a_certificate_the_host_does_not_trust(
    tools: FakeTools, https_url: str
) -> None:
    out = await run_tool(fetch_webpage, {"url": https_url}, tools)
    assert out.status == "error"
    assert f"Could not fetch {https_url}: ConnectError" in out.for_llm
    assert "CERTIFICATE_VERIFY_FAILED" in out.for_llm


async def test_web_search_trusts_the_hosts_context(
    tools: FakeTools, https_url: str, bundle: Path
) -> None:
    opts = {"url": f"{https_url}search", "api_key": "tvly-test"}
    out = await run_tool(web_search, {"query": "tls"}, tools, opts=opts)
    assert out.status == "error"
    assert "CERTIFICATE_VERIFY_FAILED" in out.for_llm
    tools.tls = build_trust({"SSL_CERT_FILE": str(bundle)}).context
    out = await run_tool(web_search, {"query": "tls"}, tools, opts=opts)
    assert out.status == "success", out.for_llm
    assert "[1] Found\nhttps://example.com/\nover TLS" in out.for_llm


def _system(tmp_path: Path, **kwargs: object) -> tuple[ToolSystem, RecordingChat]:
    return builtin_system(tmp_path, "fetch_webpage", **kwargs)


async def test_tool_system_honours_ssl_cert_file(
    tmp_path: Path, https_url: str, bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    system, chat = _system(tmp_path)
    await system.run([ToolCall("c1", "fetch_webpage", {"url": https_url})])
    (result,) = chat.results
    assert not result.is_error, result.for_llm
    assert "private page" in result.for_llm


async def test_tool_system_uses_the_context_it_is_given_once(
    tmp_path: Path, https_url: str, bundle: Path
) -> None:
    built: list[int] = []

    def host_context() -> ssl.SSLContext:
        built.append(threading.get_ident())
        return build_trust({"SSL_CERT_FILE": str(bundle)}).context

    system, chat = _system(tmp_path, tls=host_context)
    calls = [ToolCall(f"c{n}", "fetch_webpage", {"url": https_url}) for n in (1, 2)]
    await system.run(calls)
    assert [r.is_error for r in chat.results] == [False, False], chat.results
    assert len(built) == 1
    assert built[0] != threading.get_ident()  # made in a worker thread, not on the loop


async def test_lazy_context_keeps_the_first() -> None:
    made: list[ssl.SSLContext] = []

    def build() -> ssl.SSLContext:
        made.append(ssl.create_default_context())
        return made[-1]

    lazy = LazyContext(build)
    first = await lazy.get()
    assert await lazy.get() is first
    assert made == [first]
