"""The byte-level decoders shared by every adapter: lines, SSE, JSON sequences, call assembly."""

from __future__ import annotations

import json
import logging

import pytest

from codecompanion.adapters.base import Event, Finish, ReasoningDelta, TextDelta, ToolCallEvent
from codecompanion.messages import ToolCall
from codecompanion.streams.framing import JSONSeqDecoder, SSEDecoder
from codecompanion.streams.parser import (
    IdFactory,
    LineSplitter,
    assemble_message,
    make_call,
)


def test_line_splitter_handles_crlf_split_across_chunks() -> None:
    lines = LineSplitter()
    assert lines.feed(b"one\r") == []
    assert lines.feed(b"\ntwo\rthree\n") == ["one", "two", "three"]
    assert lines.feed(b"four") == []
    assert lines.close() == ["four"]


def test_line_splitter_keeps_a_character_cut_in_half() -> None:
    data = "café ☕\n".encode()
    lines = LineSplitter()
    first = lines.feed(data[:4])
    rest = lines.feed(data[4:8]) + lines.feed(data[8:])
    assert first == []
    assert rest == ["café ☕"]


def test_sse_joins_multi_line_data_and_skips_comments() -> None:
    decoder = SSEDecoder()
    out = [
        decoder.line(line)
        for line in [": keep-alive", "event: note", "data: first", "data:second", "id: 7", ""]
    ]
    message = out[-1]
    assert out[:-1] == [None] * 5
    assert message is not None
    assert (message.event, message.data) == ("note", "first\nsecond")


def test_sse_splits_events_when_blank_lines_are_missing() -> None:
    decoder = SSEDecoder()
    lines = ["event: a", 'data: {"n": 1}', "event: b", 'data: {"n": 2}', 'data: {"n": 3}']
    got = [m for m in (decoder.line(line) for line in lines) if m is not None]
    last = decoder.flush()
    assert [(m.event, m.data) for m in got] == [("a", '{"n": 1}'), ("b", '{"n": 2}')]
    assert last is not None and last.data == '{"n": 3}'


def test_sse_logs_unknown_lines(caplog: pytest.LogCaptureFixture) -> None:
    decoder = SSEDecoder()
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        assert decoder.line("garbage line") is None
    assert "unknown stream line" in caplog.text


def test_json_sequence_reads_ndjson_and_pretty_documents() -> None:
    decoder = JSONSeqDecoder()
    pretty = json.dumps({"a": [1, {"b": 2}]}, indent=2).splitlines()
    docs = []
    for line in ['{"x": 1}', "", *pretty, '{"y": 2}']:
        docs += decoder.line(line)
    docs += decoder.close()
    assert docs == [{"x": 1}, {"a": [1, {"b": 2}]}, {"y": 2}]


def test_json_sequence_skips_a_malformed_line(caplog: pytest.LogCaptureFixture) -> None:
    decoder = JSONSeqDecoder()
    with caplog.at_level(logging.WARNING, logger="codecompanion.adapters"):
        docs = decoder.line('{"broken": ') + decoder.line('{"ok": true}') + decoder.close()
    assert docs == [{"ok": True}]
    assert "malformed JSON" in caplog.text


@pytest.mark.parametrize(
    ("arguments", "expected", "raw"),
    [
        ("", {}, None),
        ("  ", {}, None),
        (None, {}, None),
        ("null", {}, None),
        ('{"a": 1}', {"a": 1}, None),
        ({"a": 1}, {"a": 1}, None),
        ('{"a": ', {}, '{"a": '),
        ("[1, 2]", {}, "[1, 2]"),
        ([1], {}, "[1]"),
    ],
)
def test_make_call_normalizes_arguments(
    arguments: object, expected: dict[str, int], raw: str | None
) -> None:
    call = make_call("id1", "tool", arguments, IdFactory())
    assert call == ToolCall("id1", "tool", expected, raw)


def test_ids_are_generated_and_skip_past_ids_in_history() -> None:
    ids = IdFactory()
    first = make_call(None, "t", "{}", ids).id
    ids.observe(["call_7", "toolu_x", "call_3"])
    assert first == "call_1"
    assert [ids(), ids()] == ["call_8", "call_9"]


def test_assemble_message() -> None:
    events: list[Event] = [
        ReasoningDelta("think "),
        ReasoningDelta("hard"),
        TextDelta("Hel"),
        TextDelta("lo"),
        ToolCallEvent(ToolCall("c1", "ls", {})),
        ToolCallEvent(ToolCall("c2", "bad", {}, "{oops")),
        Finish("tool_calls"),
    ]
    assert assemble_message(events) == {
        "content": "Hello",
        "reasoning": "think hard",
        "tool_calls": [
            {"id": "c1", "name": "ls", "arguments": {}},
            {"id": "c2", "name": "bad", "arguments": {}, "raw_arguments": "{oops"},
        ],
    }
    assert assemble_message([]) == {"content": None, "reasoning": None, "tool_calls": []}
