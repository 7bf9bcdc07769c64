"""Failures against the loopback server: one-line errors, retries, interrupted streams, secrecy."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from tests.support.adapters import SECRET, AdapterFactory, collect, runs_joined

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta
from codecompanion.errors import (
    AdapterError,
    AuthenticationError,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
    StreamInterrupted,
)
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.transport.http_types import ConnectTimedOut, Headers, HTTPResponse


def delta_text(text: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_key_names_the_key_to_check(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, status: int
) -> None:
    provider_server.enqueue(Turn.error(status, f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(AuthenticationError) as caught:
        await collect(make_adapter("openai", api_key="env:MY_OPENAI_KEY_FOR_TEST"))
    message = str(caught.value)
    assert message == f"OpenAI refused the API key (HTTP {status}): check $MY_OPENAI_KEY_FOR_TEST"
    assert len(provider_server.requests) == 1


@pytest.fixture(autouse=True)
def _test_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_OPENAI_KEY_FOR_TEST", SECRET)


async def test_unknown_model_is_named(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.error(404, "The model `gpt-9` does not exist"))
    provider_server.enqueue(Turn.error(404, "model 'qwen9' not found"))
    with pytest.raises(ModelNotFoundError, match="does not know the model 'gpt-9' \\(HTTP 404\\)"):
        await collect(make_adapter("openai", model="gpt-9"))
    with pytest.raises(ModelNotFoundError, match="run `ollama pull qwen9`"):
        await collect(make_adapter("ollama", model="qwen9"))


async def test_429_is_retried_honouring_retry_after(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(
        Turn.error(429, "slow down", headers={"Retry-After": "0.01"}),
        Turn.error(429, "slow down", headers={"retry-after-ms": "5"}),
        openai_text("finally"),
    )
    events = await collect(make_adapter("openai"))
    assert TextDelta("finally") in events
    assert len(provider_server.requests) == 3


async def test_429_after_the_last_retry_is_one_line(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.set_default(Turn.error(429, "Rate limit reached\nfor requests"))
    with pytest.raises(RateLimitError) as caught:
        await collect(make_adapter("openai", max_retries=2))
    assert str(caught.value) == (
        "OpenAI is rate limiting (HTTP 429 after 2 retries): Rate limit reached for requests"
    )
    assert len(provider_server.requests) == 3


async def test_5xx_is_retried_then_reported(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.error(502, "bad gateway"), openai_text("ok"))
    assert TextDelta("ok") in await collect(make_adapter("openai"))
    provider_server.set_default(Turn.error(503, "overloaded"))
    with pytest.raises(
        ProviderError, match=r"^OpenAI failed \(HTTP 503 after 1 retries\): overloaded$"
    ):
        await collect(make_adapter("openai", max_retries=1))


async def test_other_4xx_is_not_retried(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.error(400, "messages: field required"))
    with pytest.raises(ProviderError, match=r"refused the request \(HTTP 400\): messages: field"):
        await collect(make_adapter("anthropic"))
    assert len(provider_server.requests) == 1


def test_retry_delay_caps_retry_after() -> None:
    adapter = create_adapter(AdapterSettings(name="openai", retry_backoff=0.5, retry_max_wait=7))
    assert adapter._retry_delay(Headers([(b"Retry-After", b"120")]), 0) == 7
    assert adapter._retry_delay(Headers([(b"retry-after", b"2")]), 0) == 2
    assert adapter._retry_delay(Headers([]), 2) == 2.0
    assert adapter._retry_delay(Headers([(b"Retry-After", b"soon")]), 0) == 0.5


async def test_read_timeout_before_any_byte(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn(body_chunks=[b"late"], stall=30))
    with pytest.raises(StreamInterrupted, match="sent nothing for 0.2 s"):
        await collect(make_adapter("openai", read_timeout=0.2))


async def test_read_timeout_mid_stream_keeps_what_was_yielded(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.sse([delta_text("partial "), delta_text("never")], delay=30))
    events: list[Event] = []
    with pytest.raises(StreamInterrupted):
        await collect(make_adapter("openai", read_timeout=0.3), into=events)
    assert events == [TextDelta("partial ")]


async def test_dropped_connection_mid_stream(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    turn = Turn.sse([delta_text("one "), delta_text("two "), delta_text("three")])
    turn.drop_after = 2
    provider_server.enqueue(turn)
    events: list[Event] = []
    with pytest.raises(StreamInterrupted, match="connection dropped mid-answer"):
        await collect(make_adapter("openai"), into=events)
    assert runs_joined(events) == [TextDelta("one two ")]


async def test_error_inside_a_200_stream_after_text(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(
        Turn.sse(
            [
                'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
                '"delta": {"type": "text_delta", "text": "Hi"}}',
                'event: error\ndata: {"type": "error", "error": {"message": "Overloaded"}}',
            ]
        )
    )
    events: list[Event] = []
    with pytest.raises(ProviderError, match="^Anthropic: Overloaded$"):
        await collect(make_adapter("anthropic"), into=events)
    assert events == [TextDelta("Hi")]


async def test_malformed_lines_do_not_stop_the_answer(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, caplog: pytest.LogCaptureFixture
) -> None:
    provider_server.enqueue(
        Turn.sse(["data: {oops", "nonsense", delta_text("fine"), "[DONE]"], chunk_size=5)
    )
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        events = await collect(make_adapter("openai"))
    assert events == [TextDelta("fine"), Finish("stop")]
    assert "malformed stream data" in caplog.text


async def test_connect_timeout_is_stream_interrupted() -> None:
    class TimingOut:
        async def send(self, *args: object) -> HTTPResponse:
            raise ConnectTimedOut("connecting timed out")

        async def aclose(self) -> None:
            pass

    adapter = create_adapter(
        AdapterSettings(name="openai", api_key="k", connect_timeout=1.5), http_client=TimingOut()
    )
    with pytest.raises(StreamInterrupted, match="connecting timed out after 1.5 s"):
        await collect(adapter)
    await adapter.aclose()


async def test_refused_connection_is_one_line(make_adapter: AdapterFactory) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(AdapterError, match=f"cannot connect to http://127.0.0.1:{port}"):
        await collect(make_adapter("ollama", url=f"http://127.0.0.1:{port}"))


async def test_keys_never_reach_logs_or_errors(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, caplog: pytest.LogCaptureFixture
) -> None:
    provider_server.enqueue(Turn.error(400, f"bad key {SECRET} in request"))
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(ProviderError) as caught:
            await collect(make_adapter("openai"))
        provider_server.enqueue(Turn.error(400, f"bad key {SECRET}"))
        with pytest.raises(ProviderError):
            await collect(make_adapter("anthropic"))
    assert SECRET not in str(caught.value)
    assert "bad key *** in request" in str(caught.value)
    assert "'Authorization': '***'" in caplog.text
    assert "'x-api-key': '***'" in caplog.text
    assert SECRET not in caplog.text


async def test_missing_env_key_fails_before_any_request(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    with pytest.raises(AuthenticationError, match="environment variable NOPE_NOT_SET is not set"):
        await collect(make_adapter("openai", api_key="env:NOPE_NOT_SET"))
    assert provider_server.requests == []


async def test_unparseable_model_list(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.body(b"<html>", "text/html"), method="GET")
    provider_server.enqueue(Turn.json({"data": [{"name": "no id"}]}), method="GET")
    with pytest.raises(ProviderError, match="model list is not in the expected form"):
        await make_adapter("openai").list_models()
    with pytest.raises(ProviderError, match="model list"):
        await make_adapter("openai").list_models()
    assert json.dumps([r.path for r in provider_server.requests]) == '["/models", "/models"]'
