"""Every recorded provider response, through the parser, the loopback server and `replay`."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.adapters import WEATHER_SCHEMA, WIRE, AdapterFactory, collect, runs_joined

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings, Event, Finish, ToolCallEvent
from codecompanion.cli import replay
from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.streams.parser import assemble_message

LONDON_PARIS_C = [
    {"location": "London", "units": "celsius"},
    {"location": "Paris", "units": "celsius"},
]
EXPECTED: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_tools_streaming.txt": (
        "openai",
        {
            "content": None,
            "reasoning": None,
            "tool_calls": [
                {
                    "id": "call_RJU6xfk0OzQF3Gg9cOFS5RY7",
                    "name": "weather",
                    "arguments": LONDON_PARIS_C[0],
                },
                {
                    "id": "call_a9oyUMlFhnX8HvqzlfIx5Uek",
                    "name": "weather",
                    "arguments": LONDON_PARIS_C[1],
                },
            ],
        },
    ),
    "openai_tools_no_streaming.txt": (
        "openai",
        {
            "content": None,
            "reasoning": None,
            "tool_calls": [
                {
                    "id": "call_VGkXa0hqNLEe2HSgMO1EpOe6",
                    "name": "weather",
                    "arguments": {"location": "London, United Kingdom", "units": "celsius"},
                },
                {
                    "id": "call_HVrmLOHM2Ybd6K7vQj4x8NdQ",
                    "name": "weather",
                    "arguments": {"location": "Paris, France", "units": "celsius"},
                },
            ],
        },
    ),
    "anthropic_tools_streaming.txt": (
        "anthropic",
        {
            "content": "I'll check the weather for both cities using Celsius units.",
            "reasoning": None,
            "tool_calls": [
                {
                    "id": "toolu_01QRThyzKt6NibK3m1DjUTkE",
                    "name": "weather",
                    "arguments": {"location": "London, UK", "units": "celsius"},
                },
                {
                    "id": "toolu_015A1zQUwKw1YE3CYvRRUdXZ",
                    "name": "weather",
                    "arguments": {"location": "Paris, France", "units": "celsius"},
                },
            ],
        },
    ),
    "anthropic_tools_no_streaming.txt": (
        "anthropic",
        {
            "content": "I'll check both cities and set the units to Celsius as that's commonly "
            "used in Europe.",
            "reasoning": None,
            "tool_calls": [
                {
                    "id": "toolu_01TSJjnB81vBBT8dhP3tTCaM",
                    "name": "weather",
                    "arguments": {"location": "London, UK", "units": "celsius"},
                },
                {
                    "id": "toolu_01UEd4jZFvj5gdqyL1L7QTqg",
                    "name": "weather",
                    "arguments": {"location": "Paris, France", "units": "celsius"},
                },
            ],
        },
    ),
    "gemini_tools_streaming.txt": (
        "gemini",
        {
            "content": None,
            "reasoning": None,
            "tool_calls": [
                {"id": "call_1", "name": "weather", "arguments": LONDON_PARIS_C[0]},
                {"id": "call_2", "name": "weather", "arguments": LONDON_PARIS_C[1]},
            ],
        },
    ),
    "ollama_tools_streaming.txt": (
        "ollama",
        {
            "content": None,
            "reasoning": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "name": "weather",
                    "arguments": {"location": "London, UK", "units": "celsius"},
                },
                {
                    "id": "call_2",
                    "name": "weather",
                    "arguments": {"location": "Paris, FR", "units": "fahrenheit"},
                },
            ],
        },
    ),
}
CAPTURES = sorted(EXPECTED)


def capture(name: str) -> bytes:
    path = WIRE / name
    if not path.exists():
        pytest.skip(f"recorded responses not found at {WIRE} (expected <repo>/../shared/wire)")
    return path.read_bytes()


def parse(adapter_name: str, chunks: list[bytes]) -> list[Event]:
    settings_ = AdapterSettings(name=adapter_name, api_key="k", model="m")
    parser = create_adapter(settings_).new_parser()
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    assert parser.error is None
    return events


def test_every_capture_has_an_expectation() -> None:
    if not WIRE.exists():
        pytest.skip(f"recorded responses not found at {WIRE}")
    found = sorted(p.name for p in WIRE.glob("*.txt"))
    assert found == CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_parses_to_the_expected_message(name: str) -> None:
    adapter_name, expected = EXPECTED[name]
    events = parse(adapter_name, [capture(name)])
    assert assemble_message(events) == expected
    assert events[-1] == Finish("tool_calls")
    assert sum(isinstance(e, Finish) for e in events) == 1


@pytest.mark.parametrize("name", CAPTURES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_any_split_of_the_bytes_gives_the_same_events(name: str, cuts: list[int]) -> None:
    data = capture(name)
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    whole = parse(EXPECTED[name][0], [data])
    assert runs_joined(parse(EXPECTED[name][0], chunks)) == runs_joined(whole)


@pytest.mark.parametrize("name", CAPTURES)
async def test_capture_through_the_loopback_server(
    provider_server: LoopbackServer, make_adapter: AdapterFactory, name: str
) -> None:
    adapter_name, expected = EXPECTED[name]
    capture(name)
    provider_server.enqueue(Turn.file(WIRE / name, chunk_size=17))
    adapter = make_adapter(adapter_name, stream="no_streaming" not in name)
    events = await collect(adapter, tools=[WEATHER_SCHEMA])
    assert assemble_message(events) == expected
    assert [e.call.name for e in events if isinstance(e, ToolCallEvent)] == ["weather"] * 2
    assert len(provider_server.requests) == 1


@pytest.mark.parametrize("name", CAPTURES)
def test_replay_subcommand_prints_the_message(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capture(name)
    parser = argparse.ArgumentParser()
    replay.add_parser(parser.add_subparsers())
    args = parser.parse_args(["replay", "--adapter", EXPECTED[name][0], str(WIRE / name)])
    assert args.handler(args) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED[name][1]


def test_replay_reports_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "error.txt"
    body.write_text('data: {"error": {"message": "quota exceeded"}}\n\n')
    parser = argparse.ArgumentParser()
    replay.add_parser(parser.add_subparsers())
    args = parser.parse_args(["replay", "--adapter", "openai", str(body)])
    missing = parser.parse_args(["replay", "--adapter", "openai", str(tmp_path / "nope")])
    assert args.handler(args) == 1
    assert capsys.readouterr().err == "replay: OpenAI: quota exceeded\n"
    assert missing.handler(missing) == 1
    assert "cannot read" in capsys.readouterr().err


def test_replay_as_a_module_command() -> None:
    data = capture("ollama_tools_streaming.txt")
    root = Path(__file__).resolve().parents[2]
    if not (root / "rplugin/python3/codecompanion/cli/tool.py").exists():
        pytest.skip("__main__ also needs codecompanion.cli.tool, not written yet")
    result = subprocess.run(
        [sys.executable, "-m", "codecompanion", "replay", "--adapter", "ollama", "-"],
        input=data,
        capture_output=True,
        cwd=root / "rplugin/python3",
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED["ollama_tools_streaming.txt"][1]
