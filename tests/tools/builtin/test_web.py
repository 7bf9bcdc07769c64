"""fetch_webpage and web_search against the loopback server: text, errors, timeouts, no hangs."""

from __future__ import annotations

import tracemalloc
import zlib
from collections.abc import Iterator

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.tools.builtin import fetch_webpage, web_search
from tests.support.builtin import FakeTools, prompt, run_tool

HTML = b"""<html><head><title>T</title><script>var x = 1;</script></head>
<body><h1>Guide</h1><p>Use <a href="/docs">the docs</a> and <b>be kind</b>.</p>
<img src="a.png" alt="pic"></body></html>"""


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as started:
        yield started


async def test_fetch_html_as_text(tools: FakeTools, server: LoopbackServer) -> None:
    server.enqueue(Turn.body(HTML, "text/html; charset=utf-8"), method="GET")
    url = f"{server.url}/page"
    out = await run_tool(fetch_webpage, {"url": url}, tools)
    assert out.status == "success"
    assert f"Content of {url} (text/html; charset=utf-8):" in out.for_llm
    assert "# Guide" in out.for_llm
    assert "[the docs](/docs)" in out.for_llm
    assert "**be kind**" in out.for_llm
    assert "a.png" not in out.for_llm
    assert out.for_user == f"Fetched `{url}`"


async def test_fetch_plain_text_and_cap(tools: FakeTools, server: LoopbackServer) -> None:
    server.enqueue(Turn.body(b"word " * 5000, "text/plain"), method="GET")
    out = await run_tool(fetch_webpage, {"url": server.url}, tools, opts={"max_chars": 1000})
    assert out.status == "success"
    assert "(cut to fit)" in out.for_llm
    assert "characters cut" in out.for_llm
    assert len(out.for_llm) < 1500


async def test_fetch_http_error_binary_and_refused_urls(
    tools: FakeTools, server: LoopbackServer
) -> None:
    server.enqueue(Turn.error(404, "gone"), method="GET")
    out = await run_tool(fetch_webpage, {"url": f"{server.url}/x"}, tools)
    assert out.status == "error"
    assert "answered HTTP 404" in out.for_llm
    server.enqueue(Turn.body(b"\x89PNG\x00\x00", "image/png"), method="GET")
    out = await run_tool(fetch_webpage, {"url": server.url}, tools)
    assert "not a text page (content type image/png)" in out.for_llm
    for url in ("file:///etc/passwd", "ftp://example.com/x", "http://", "javascript:alert(1)"):
        out = await run_tool(fetch_webpage, {"url": url}, tools)
        assert "Only http:// and https:// URLs" in out.for_llm
    assert len(server.requests) == 2


async def test_fetch_timeout_and_connection_refused(
    tools: FakeTools, server: LoopbackServer
) -> None:
    server.enqueue(Turn(stall=30, body_chunks=[b"late"]), method="GET")
    out = await run_tool(fetch_webpage, {"url": server.url}, tools, opts={"timeout": 300})
    assert out.status == "timeout"
    assert "timed out" in out.for_llm
    closed = LoopbackServer().start()
    port = closed.port
    closed.stop()
    out = await run_tool(fetch_webpage, {"url": f"http://127.0.0.1:{port}/"}, tools)
    assert out.status == "error"
    assert "Could not fetch" in out.for_llm


def test_fetch_requires_approval(tools: FakeTools) -> None:
    assert fetch_webpage.TOOL.opts["requires_approval"] is True
    args = {"url": "https://example.com/?q=1"}
    assert prompt(fetch_webpage, args, tools) == "Fetch the web page https://example.com/?q=1?"
    assert fetch_webpage.TOOL.opts["approval_key"](args) == "https://example.com/?q=1"


def _search_opts(server: LoopbackServer, **extra: object) -> dict[str, object]:
    return {"url": f"{server.url}/search", "api_key": "tvly-test", **extra}


async def test_web_search_results(tools: FakeTools, server: LoopbackServer) -> None:
    answer = {
        "results": [
            {"title": "Python docs", "url": "https://docs.python.org/3/", "content": "The docs."},
            {"title": "PEP 8", "url": "https://peps.python.org/pep-0008/", "content": "Style."},
        ]
    }
    server.enqueue(Turn.json(answer))
    args = {"query": "python style", "domains": ["python.org"]}
    out = await run_tool(web_search, args, tools, opts=_search_opts(server))
    assert out.status == "success"
    assert out.for_llm.startswith("2 web results for `python style`:")
    assert "[1] Python docs\nhttps://docs.python.org/3/\nThe docs." in out.for_llm
    assert out.for_user == "Searched the web for `python style`: 2 results"
    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer tvly-test"
    body = request.json()
    assert (body["query"], body["include_domains"], body["max_results"]) == (
        "python style",
        ["python.org"],
        5,
    )


async def test_web_search_without_key_never_calls_out(
    tools: FakeTools, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts={"url": f"{server.url}/s"}
    )
    assert out.status == "error"
    assert "TAVILY_API_KEY" in out.for_llm
    assert server.requests == []
    monkeypatch.setenv("TAVILY_API_KEY", "from-env")
    server.enqueue(Turn.json({"results": []}))
    out = await run_tool(
        web_search, {"query": "x", "domains": []}, tools, opts={"url": f"{server.url}/s"}
    )
    assert out.for_llm == "No web results for `x`."
    assert server.requests[0].headers["authorization"] == "Bearer from-env"


async def test_web_search_errors_never_hang(tools: FakeTools, server: LoopbackServer) -> None:
    server.enqueue(Turn.error(401, "bad key"))
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts=_search_opts(server)
    )
    assert "refused the API key (HTTP 401)" in out.for_llm
    server.enqueue(Turn.error(500, "boom"))
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts=_search_opts(server)
    )
    assert "HTTP 500" in out.for_llm
    server.enqueue(Turn(stall=30))
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts=_search_opts(server, timeout=300)
    )
    assert out.status == "timeout" and "timed out" in out.for_llm
    out = await run_tool(
        web_search, {"query": " ", "domains": None}, tools, opts=_search_opts(server)
    )
    assert "`query` is empty" in out.for_llm
    out = await run_tool(
        web_search, {"query": "x", "domains": "a.com"}, tools, opts=_search_opts(server)
    )
    assert "`domains` must be a list" in out.for_llm


def redirect(location: str, status: int = 302) -> Turn:
    return Turn(status, {"Location": location, "Content-Length": "0"}, [b""])


@pytest.fixture
def other() -> Iterator[LoopbackServer]:
    """A second site (another port: another origin)."""
    with LoopbackServer() as started:
        yield started


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_to_another_site_is_refused_unless_the_user_approves_it(
    tools: FakeTools, server: LoopbackServer, other: LoopbackServer, status: int
) -> None:
    target = f"{other.url}/elsewhere?token=abc"
    server.enqueue(redirect(target, status), method="GET")
    other.enqueue(Turn.body(b"secret page", "text/plain"), method="GET")
    out = await run_tool(fetch_webpage, {"url": f"{server.url}/start"}, tools)
    assert out.status == "error"
    assert f"redirected to {target}, another site" in out.for_llm
    assert tools.questions == [f"{server.url}/start redirects to another site: {target}. Fetch it?"]
    assert tools.kinds == ["redirect"]  # asked through the approval gate as a redirect
    assert other.requests == []
    # Approved: the page of the other site is fetched.
    tools.answers = [True]
    server.enqueue(redirect(target, status), method="GET")
    out = await run_tool(fetch_webpage, {"url": f"{server.url}/start"}, tools)
    assert out.status == "success" and "secret page" in out.for_llm
    assert f"Content of {target}" in out.for_llm
    assert len(other.requests) == 1


async def test_redirects_within_the_site_are_followed_without_a_question(
    tools: FakeTools, server: LoopbackServer
) -> None:
    server.enqueue(redirect("/two"), redirect(f"{server.url}/three"), method="GET")
    server.enqueue(Turn.body(b"arrived", "text/plain"), method="GET")
    out = await run_tool(fetch_webpage, {"url": f"{server.url}/one"}, tools)
    assert out.status == "success" and "arrived" in out.for_llm
    assert [r.path for r in server.requests] == ["/one", "/two", "/three"]
    assert tools.questions == []


async def test_a_redirect_loop_and_a_redirect_to_a_file_url_are_errors(
    tools: FakeTools, server: LoopbackServer
) -> None:
    server.set_default(None)
    for _ in range(7):
        server.enqueue(redirect("/again"), method="GET")
    out = await run_tool(fetch_webpage, {"url": f"{server.url}/again"}, tools)
    assert "redirected more than 5 times" in out.for_llm
    server.enqueue(redirect("file:///etc/passwd"), method="GET")
    out = await run_tool(fetch_webpage, {"url": server.url}, tools)
    assert "Only http:// and https:// URLs" in out.for_llm


async def test_a_compressed_page_is_cut_at_the_byte_limit_after_decompression(
    tools: FakeTools, server: LoopbackServer
) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"word " * 200_000
    bomb = b"".join(packer.compress(block) for _ in range(100)) + packer.flush()  # 100 MB
    turn = Turn.body(bomb, "text/plain", chunk_size=65536)
    turn.headers["Content-Encoding"] = "gzip"
    server.enqueue(turn, method="GET")
    tracemalloc.start()
    try:
        out = await run_tool(fetch_webpage, {"url": server.url}, tools, opts={"max_bytes": 100_000})
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.status == "success"
    assert "(cut to fit)" in out.for_llm
    assert peak < 50_000_000


async def test_web_search_masks_an_echoed_key_and_caps_the_answer(
    tools: FakeTools, server: LoopbackServer
) -> None:
    server.enqueue(Turn.error(400, "invalid request for key tvly-test: bad query"))
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts=_search_opts(server)
    )
    assert "HTTP 400" in out.for_llm and "***" in out.for_llm
    assert "tvly-test" not in out.for_llm
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    bomb = b"".join(packer.compress(b" " * (1 << 20)) for _ in range(50)) + packer.flush()
    turn = Turn.body(bomb, "application/json", chunk_size=65536)
    turn.headers["Content-Encoding"] = "gzip"
    server.enqueue(turn)
    out = await run_tool(
        web_search, {"query": "x", "domains": None}, tools, opts=_search_opts(server)
    )
    assert out.status == "error" and "larger than 5,000,000 bytes" in out.for_llm


async def test_web_search_masks_a_key_echoed_across_the_quoted_length(
    tools: FakeTools, server: LoopbackServer
) -> None:
    key = "tvly-" + "k" * 40
    prefix = len('{"error": {"message": "')
    server.enqueue(Turn.error(400, "x" * (290 - prefix) + key))  # the key spans character 300
    opts = {**_search_opts(server), "api_key": key}
    out = await run_tool(web_search, {"query": "x", "domains": None}, tools, opts=opts)
    assert "HTTP 400" in out.for_llm and "***" in out.for_llm
    assert "tvly-kkkk" not in out.for_llm
