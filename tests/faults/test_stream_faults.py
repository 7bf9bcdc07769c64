"""Provider faults on real Neovim: one clear line, partial answer kept and marked, chat saved,
no call left without a result, and the next submit works."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text, openai_tool_calls
from tests.support.faults import codecompanion_lines, one_clear_line, saved_chat, turn_done
from tests.support.nvim import Editor
from tests.support.shapes import check_openai, check_saved_messages

StartNvim = Callable[..., Editor]


def delta(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def call_head(call_id: str, name: str) -> dict[str, Any]:
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name}}
    head["function"]["arguments"] = ""
    return {"choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]}


def call_args(text: str, finish: str | None = None) -> dict[str, Any]:
    part = {"index": 0, "function": {"arguments": text}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": finish}]}


def dropped(turn: Turn, after: int) -> Turn:
    turn.drop_after = after
    return turn


TRUNCATED_ARGS = '{"filepath": "made.txt", "content": "the first half of'


@dataclass
class Fault:
    """A scripted failure and what the user must be told."""

    turns: list[Turn]
    words: tuple[str, ...]  # the one message line names the problem with these
    partial: str | None = None  # text that must survive, marked incomplete
    requests: int = 1  # how many requests the fault takes (retries included)
    tools: str = ""  # tools offered in the message
    extra: dict[str, Any] = field(default_factory=dict)


FAULTS: dict[str, Fault] = {
    "drop-mid-answer": Fault(
        [dropped(openai_text("alpha beta gamma delta", chunks=4), 3)],
        ("connection dropped",),
        partial="alpha beta",
    ),
    "drop-mid-tool-call": Fault(
        [
            dropped(
                openai_tool_calls(
                    [("c1", "create_file", {"filepath": "made.txt", "content": "x" * 30})],
                    text="Let me write it.",
                ),
                4,
            )
        ],
        ("connection dropped",),
        partial="Let me write it.",
        tools="@{create_file}",
    ),
    "401": Fault([Turn.error(401, "Incorrect API key provided")], ("HTTP 401", "api_key")),
    "404": Fault([Turn.error(404, "The model does not exist")], ("HTTP 404", "gpt-test")),
    "429-retry-after": Fault(
        [Turn.error(429, "slow down", headers={"Retry-After": "0.05"})] * 2,
        ("HTTP 429", "slow down"),
        requests=2,
    ),
    "500": Fault([Turn.error(500, "internal failure")] * 2, ("HTTP 500",), requests=2),
    "503": Fault([Turn.error(503, "overloaded")] * 2, ("HTTP 503", "overloaded"), requests=2),
    "stall-past-read-timeout": Fault(
        [Turn.sse([delta("slow start "), delta("never arrives")], delay=5)],
        ("sent nothing for 0.4 s",),
        partial="slow start",
    ),
    "garbage-body": Fault(
        [Turn.body(b"<html><body>502 Bad Gateway</body></html>\n", "text/html")],
        ("could not be read",),
    ),
    "error-event-in-200": Fault(
        [Turn.sse([delta("Thinking about it. "), {"error": {"message": "server overloaded"}}])],
        ("server overloaded",),
        partial="Thinking about it.",
    ),
    "truncated-call-at-length-limit": Fault(
        [
            Turn.sse(
                [
                    delta("Writing the file. "),
                    call_head("c1", "create_file"),
                    call_args(TRUNCATED_ARGS, finish="length"),
                    "[DONE]",
                ]
            )
        ],
        ("tool call", "cut off"),
        partial="Writing the file.",
        tools="@{create_file}",
    ),
    "truncated-call-stream-ends": Fault(
        [
            Turn.sse(
                [delta("Writing the file. "), call_head("c1", "create_file"), call_args("{")]
                + [call_args(TRUNCATED_ARGS[1:])]
            )
        ],
        ("tool call", "cut off"),
        partial="Writing the file.",
        tools="@{create_file}",
    ),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_is_one_line_keeps_the_partial_answer_and_the_chat_goes_on(
    name: str,
    start_nvim: StartNvim,
    fast_config: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    fault = FAULTS[name]
    provider_server.enqueue(*fault.turns, openai_text("recovered fine"))
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(config_file=fast_config(""), cwd=project)
    bufnr = ed.open_chat()
    ed.answer("Accept all")  # would let a wrongly run create_file through: it must not run
    ed.send(f"{fault.tools} go".strip())
    turn_done(ed)

    line = one_clear_line(ed, *fault.words)
    assert len(line) < 300
    assert len(provider_server.requests) == fault.requests
    text = ed.text(bufnr)
    assert "[incomplete:" in text
    saved = saved_chat(ed)
    check_saved_messages(saved["messages"])
    last = saved["messages"][-1]
    assert last["role"] == "llm" and last["extra"]["incomplete"]
    if fault.partial:
        assert fault.partial in text
        assert last["content"].startswith(fault.partial)
    assert not (project / "made.txt").exists()
    assert [p for p in ed.prompts() if p["kind"] == "codecompanion.diff"] == []

    ed.send("again")
    turn_done(ed, 2)
    assert "recovered fine" in ed.text(bufnr)
    body = provider_server.requests[-1].json()
    check_openai(body["messages"])
    assert body["messages"][-1] == {"role": "user", "content": "again"}
    assert json.dumps(body).count("recovered") == 0
    check_saved_messages(saved_chat(ed)["messages"])


def test_garbage_lines_inside_a_good_stream_are_skipped_silently(
    start_nvim: StartNvim, fast_config: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        Turn.sse(["data: {oops", "nonsense line", delta("fine "), ": comment", delta("answer")])
    )
    ed = start_nvim(config_file=fast_config(""))
    bufnr = ed.open_chat()
    ed.send("hi")
    turn_done(ed)
    assert "fine answer" in ed.text(bufnr)
    assert "[incomplete:" not in ed.text(bufnr)
    assert [ln for ln in codecompanion_lines(ed) if "error" in ln.lower()] == []
    assert saved_chat(ed)["messages"][-1]["content"] == "fine answer"


def test_a_ten_megabyte_answer_streams_and_is_saved_whole(
    start_nvim: StartNvim, fast_config: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    line = "line {:06d} of a very long answer, padded out a bit\n"
    body = "".join(line.format(i) for i in range(200_000))
    assert len(body) > 10_000_000
    provider_server.enqueue(openai_text(body, chunks=400), openai_text("short one"))
    ed = start_nvim(config_file=fast_config(""))
    bufnr = ed.open_chat()
    ed.send("everything please")
    turn_done(ed, timeout=30)
    lines = ed.nvim.api.buf_line_count(bufnr)
    assert lines > 200_000
    assert (
        ed.nvim.api.buf_get_lines(bufnr, lines - 8, lines, False).count(
            "line 199999 of a very long answer, padded out a bit"
        )
        == 1
    )
    assert saved_chat(ed)["messages"][-1]["content"] == body
    ed.send("and now?")
    turn_done(ed, 2)
    count = ed.nvim.api.buf_line_count(bufnr)
    assert "short one" in ed.nvim.api.buf_get_lines(bufnr, count - 8, count, False)
