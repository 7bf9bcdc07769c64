"""The loopback fake provider: scripting, recording, streaming, keep-alive and failures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from codecompanion.loopback.server import (
    LoopbackServer,
    Turn,
    detect_format,
    openai_text,
    openai_tool_calls,
)

WIRE = Path(__file__).resolve().parents[1] / "data" / "wire"


def sse_payloads(body: str) -> list[Any]:
    """The decoded `data:` payloads of a well-formed SSE body."""
    out: list[Any] = []
    for line in body.splitlines():
        if line.startswith("data: "):
            data = line[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


async def test_openai_text_streams_the_text_then_usage_and_done(
    provider_server: LoopbackServer,
) -> None:
    provider_server.enqueue(openai_text("hello there world", chunks=3))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        response = await client.post("/v1/chat/completions", json={"model": "m"})
    payloads = sse_payloads(response.text)
    text = "".join(
        p["choices"][0]["delta"].get("content") or ""
        for p in payloads[:-1]
        if isinstance(p, dict) and p["choices"]
    )
    assert response.headers["content-type"] == "text/event-stream"
    assert text == "hello there world"
    assert len([p for p in payloads if isinstance(p, dict) and p["choices"]]) >= 4
    assert payloads[-2]["usage"]["total_tokens"] > 0
    assert payloads[-1] == "[DONE]"


async def test_openai_tool_calls_fragments_reassemble(provider_server: LoopbackServer) -> None:
    calls = [("call_a", "read_file", {"path": "a.py", "start": 1}), ("call_b", "ls", {})]
    provider_server.enqueue(openai_tool_calls(calls, text="Let me look."))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        response = await client.post("/chat/completions", json={})
    assembled: dict[int, dict[str, str]] = {}
    finish = None
    for payload in sse_payloads(response.text):
        if payload == "[DONE]" or not payload["choices"]:
            continue
        choice = payload["choices"][0]
        finish = choice["finish_reason"] or finish
        for part in choice["delta"].get("tool_calls", []):
            entry = assembled.setdefault(part["index"], {"id": "", "name": "", "args": ""})
            entry["id"] += part.get("id", "")
            entry["name"] += part["function"].get("name", "")
            entry["args"] += part["function"].get("arguments", "")
    fragments = response.text.count('"arguments"')
    got = [(e["id"], e["name"], json.loads(e["args"])) for e in assembled.values()]
    assert got == calls
    assert finish == "tool_calls"
    assert fragments > len(calls) * 2


async def test_chunks_arrive_incrementally(provider_server: LoopbackServer) -> None:
    # The second chunk is held back for a minute: the first must be readable long before.
    provider_server.enqueue(Turn.body(b"first|second", "text/plain", chunk_size=6, delay=60))
    async with (
        httpx.AsyncClient(base_url=provider_server.url) as client,
        client.stream("POST", "/x", json={}) as response,
    ):
        first = await asyncio.wait_for(response.aiter_raw().__anext__(), timeout=5)
    assert first == b"first|"


async def test_pooled_client_reuses_the_connection(provider_server: LoopbackServer) -> None:
    provider_server.enqueue(openai_text("one"), openai_text("two"))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        for _ in range(2):
            async with client.stream("POST", "/chat/completions", json={}) as response:
                await response.aread()
    first, second = provider_server.requests
    assert (first.reused, second.reused) == (False, True)
    assert first.connection == second.connection
    assert provider_server.connections == 1


async def test_requests_are_recorded(provider_server: LoopbackServer) -> None:
    provider_server.enqueue(openai_text("ok"))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        await client.post(
            "/v1/chat/completions?api-version=1", json={"a": [1, 2]}, headers={"X-Key": "k"}
        )
    (request,) = provider_server.wait_for_requests(1)
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.query == {"api-version": "1"}
    assert request.headers["x-key"] == "k"
    assert request.json() == {"a": [1, 2]}


async def test_non_json_body_is_kept_as_text(provider_server: LoopbackServer) -> None:
    provider_server.enqueue(openai_text("ok"))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        await client.post("/x", content=b"not json")
    assert provider_server.requests[0].body == "not json"
    with pytest.raises(ValueError, match="not JSON"):
        provider_server.requests[0].json()


async def test_empty_queue_answers_a_clear_500(provider_server: LoopbackServer) -> None:
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        response = await client.post("/chat/completions", json={})
    assert response.status_code == 500
    assert "no scripted turn left" in response.json()["error"]["message"]


async def test_default_turn_is_served_when_queue_is_empty(provider_server: LoopbackServer) -> None:
    provider_server.set_default(openai_text("again"))
    provider_server.enqueue(Turn.error(503, "busy"))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        statuses = [(await client.post("/c", json={})).status_code for _ in range(3)]
    assert statuses == [503, 200, 200]
    assert provider_server.pending() == 0


async def test_error_turn_carries_status_message_and_headers(
    provider_server: LoopbackServer,
) -> None:
    provider_server.enqueue(Turn.error(429, "slow down", headers={"Retry-After": "2"}))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        response = await client.post("/c", json={})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["message"] == "slow down"


async def test_drop_after_breaks_the_stream(provider_server: LoopbackServer) -> None:
    turn = Turn.sse([{"n": 1}, {"n": 2}, {"n": 3}])
    turn.drop_after = 1
    provider_server.enqueue(turn)
    received = b""
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("POST", "/c", json={}) as response:
                async for chunk in response.aiter_raw():
                    received += chunk
    assert received == b'data: {"n": 1}\n\n'


async def test_stall_triggers_a_read_timeout(provider_server: LoopbackServer) -> None:
    provider_server.enqueue(Turn(body_chunks=[b"late"], stall=30))
    timeout = httpx.Timeout(5.0, read=0.2)
    async with httpx.AsyncClient(base_url=provider_server.url, timeout=timeout) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.post("/c", json={})


async def test_model_lists_for_get(provider_server: LoopbackServer) -> None:
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        openai = (await client.get("/v1/models")).json()
        ollama = (await client.get("/api/tags")).json()
        missing = await client.get("/nothing")
    assert [m["id"] for m in openai["data"]] == provider_server.models
    assert [m["name"] for m in ollama["models"]] == provider_server.models
    assert missing.status_code == 404


async def test_get_turns_can_be_scripted(provider_server: LoopbackServer) -> None:
    provider_server.enqueue(Turn.json({"token": "t"}), method="GET")
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        scripted = (await client.get("/copilot_internal/v2/token")).json()
        builtin = await client.get("/copilot_internal/v2/token")
    assert scripted == {"token": "t"}
    assert builtin.status_code == 404


def test_sse_builder_formats_events_and_rechunks() -> None:
    events: list[dict[str, Any] | str] = [{"a": 1}, ": comment", "event: error\ndata: {}", "[DONE]"]
    whole = b"".join(Turn.sse(events).body_chunks)
    split = Turn.sse(events, chunk_size=5)
    assert whole == b'data: {"a": 1}\n\n: comment\n\nevent: error\ndata: {}\n\ndata: [DONE]\n\n'
    assert b"".join(split.body_chunks) == whole
    assert {len(c) for c in split.body_chunks[:-1]} == {5}


def test_ndjson_builder() -> None:
    turn = Turn.ndjson([{"a": 1}, {"b": 2}])
    assert turn.body_chunks == [b'{"a": 1}\n', b'{"b": 2}\n']
    assert turn.headers["Content-Type"] == "application/x-ndjson"


def test_wait_for_requests_times_out(provider_server: LoopbackServer) -> None:
    with pytest.raises(TimeoutError, match="expected 1 requests, got 0"):
        provider_server.wait_for_requests(1, timeout=0.05)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("openai_tools_streaming.txt", "sse"),
        ("openai_tools_no_streaming.txt", "json"),
        ("anthropic_tools_streaming.txt", "sse"),
        ("anthropic_tools_no_streaming.txt", "json"),
        ("gemini_tools_streaming.txt", "sse"),
        ("ollama_tools_streaming.txt", "ndjson"),
    ],
)
async def test_file_turn_detects_format_and_serves_bytes(
    provider_server: LoopbackServer, name: str, kind: str
) -> None:
    path = WIRE / name
    data = path.read_bytes()
    provider_server.enqueue(Turn.file(path, chunk_size=7 if kind == "sse" else None))
    async with httpx.AsyncClient(base_url=provider_server.url) as client:
        response = await client.post("/c", json={})
    assert detect_format(data) == kind
    assert response.content == data


def test_stop_closes_the_server() -> None:
    server = LoopbackServer().start()
    url = server.url
    with httpx.Client(base_url=url) as client:
        assert client.get("/api/tags").status_code == 200
        server.stop()
        with pytest.raises(httpx.TransportError):
            client.get("/api/tags")
    server.stop()


def test_the_recorded_captures_are_in_the_repository() -> None:
    # Tests that replay them must never skip for want of a folder outside the repository.
    names = {p.name for p in WIRE.glob("*.txt")}
    assert len(names) == 6 and (WIRE / "tools.json").is_file() and (WIRE / "README.md").is_file()
