"""A 200 answer that is only plain text (Copilot's `quota exceeded`, a proxy's message) is a
one-line error from every adapter's parser, never an empty answer; text beside JSON is not."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tests.support.adapters import AdapterFactory, collect
from tests.support.copilot import copilot, sign_in, token_turn

from codecompanion.adapters import ADAPTERS, create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta
from codecompanion.adapters.copilot import QUOTA_EXCEEDED
from codecompanion.errors import ProviderError
from codecompanion.loopback.server import LoopbackServer, Turn, openai_text

QUOTA_BODIES = [
    b"quota exceeded",
    b"quota exceeded\n",
    b"\r\nquota exceeded\r\n",
    b"data: quota exceeded\n\n",
    b"quota exceeded\n\ndata: [DONE]\n\n",
    b"quo",  # the rest arrives in a second piece (below)
]


def parse(name: str, *pieces: bytes) -> tuple[list[Event], Exception | None]:
    settings = AdapterSettings(name=name, url="http://x", api_key="k")
    parser = create_adapter(settings).new_parser()
    events: list[Event] = []
    for piece in pieces:
        events += parser.feed(piece)
    events += parser.close()
    return events, parser.error


@pytest.mark.parametrize("body", QUOTA_BODIES)
@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_a_text_only_body_is_one_line_error_for_every_adapter(name: str, body: bytes) -> None:
    pieces = (body, b"ta exceeded\n") if body == b"quo" else (body,)
    events, error = parse(name, *pieces)
    assert isinstance(error, ProviderError), (name, events)
    assert events == []  # no Finish: the turn is an error, not an empty answer
    message = str(error)
    assert "\n" not in message and len(message) < 240
    if name == "copilot":
        assert message == QUOTA_EXCEEDED
    else:
        assert message.endswith("could not be read: quota exceeded")


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_unknown_lines_beside_a_real_answer_are_skipped(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    answers = {
        "anthropic": b'data: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "text_delta", "text": "ok"}}\n\n',
        "gemini": b'data: {"candidates": [{"content": {"parts": [{"text": "ok"}]}}]}\n\n',
        "gemini_interactions": b'data: {"event_type": "step.delta", "index": 0, '
        b'"delta": {"type": "text", "text": "ok"}}\n\n',
        "ollama": b'{"message": {"content": "ok"}, "done": true}\n',
        "openai_responses": b'data: {"type": "response.output_text.delta", "delta": "ok"}\n\n',
    }
    answer = answers.get(name, b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}}]}\n\n')
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        events, error = parse(name, b"weird line\n\n" + answer if name != "ollama" else answer)
    assert error is None
    assert TextDelta("ok") in events and isinstance(events[-1], Finish)


@pytest.mark.parametrize("body", [b"", b"\n\n", b": keep-alive\n\n", b"event: ping\n\n"])
def test_bodies_without_text_are_left_to_the_completeness_check(body: bytes) -> None:
    events, error = parse("openai", body)
    assert (events, error) == ([Finish("stop")], None)


def test_copilot_names_only_its_quota_message() -> None:
    _, error = parse("copilot", b"Bad Gateway\n")
    assert str(error) == "GitHub Copilot sent a response that could not be read: Bad Gateway"


async def test_copilot_quota_through_the_loopback_server(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, tmp_path: Path
) -> None:
    provider_server.enqueue(token_turn(provider_server, "tid=c", 3600), method="GET")
    provider_server.enqueue(Turn.body(b"quota exceeded", "text/plain"))
    provider_server.enqueue(Turn.body(b"quota exceeded", "text/plain", chunk_size=3))
    provider_server.enqueue(Turn.error(429, "quota exceeded"))
    provider_server.enqueue(openai_text("back"))
    adapter = copilot(make_adapter, provider_server, sign_in(tmp_path))
    adapter.settings.max_retries = 0
    for _ in range(3):
        with pytest.raises(ProviderError) as caught:
            await collect(adapter)
        assert str(caught.value) == QUOTA_EXCEEDED
    assert any(isinstance(e, TextDelta) for e in await collect(adapter))


async def test_text_then_done_is_no_longer_an_empty_answer(
    provider_server: LoopbackServer, make_adapter: AdapterFactory
) -> None:
    provider_server.enqueue(Turn.sse(["upstream quota exceeded", "[DONE]"]))
    with pytest.raises(ProviderError, match="could not be read: upstream quota exceeded"):
        await collect(make_adapter("openai"))


def test_replay_reports_a_text_only_capture() -> None:
    from codecompanion.cli.replay import replay_bytes

    with pytest.raises(ProviderError, match="quota exceeded"):
        replay_bytes("copilot", b"quota exceeded\n")
    assert replay_bytes("copilot", b"")["content"] is None  # empty is not text: no error here
