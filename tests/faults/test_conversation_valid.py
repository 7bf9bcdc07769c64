"""What a provider sends cannot break the conversation, on real Neovim over loopback HTTP: half a
character per stream event, and tool-call ids it repeats."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text, openai_tool_calls
from tests.support.faults import codecompanion_lines, saved_chat, turn_done
from tests.support.nvim import Editor
from tests.support.shapes import check_openai, check_saved_messages

StartNvim = Callable[..., Editor]
SMILE = "\U0001f600"


def delta(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def test_a_surrogate_pair_split_across_events_renders_and_saves(
    start_nvim: StartNvim, fast_config: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        Turn.sse([delta("Here: \ud83d"), delta("\ude00 smile, lone \udc00."), "[DONE]"]),
        openai_text("next answer"),
    )
    ed = start_nvim(config_file=fast_config(""))
    bufnr = ed.open_chat()
    ed.send("hi")
    turn_done(ed)
    assert f"Here: {SMILE} smile, lone \ufffd." in ed.text(bufnr)
    assert saved_chat(ed)["messages"][-1]["content"] == f"Here: {SMILE} smile, lone \ufffd."
    ed.send("again")
    turn_done(ed, 2)
    assert "next answer" in ed.text(bufnr)
    sent = provider_server.requests[-1].json()["messages"]
    assert sent[-2] == {"role": "assistant", "content": f"Here: {SMILE} smile, lone \ufffd."}
    assert [ln for ln in codecompanion_lines(ed) if "error" in ln.lower()] == []


def read(name: str) -> dict[str, Any]:
    return {
        "filepath": f"{name}.txt",
        "start_line_number_base_zero": 0,
        "end_line_number_base_zero": -1,
    }


def test_repeated_tool_call_ids_each_run_and_the_next_request_is_valid(
    start_nvim: StartNvim,
    fast_config: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("a", "b", "c"):
        (project / f"{name}.txt").write_text(f"contents of {name}\n")
    provider_server.enqueue(
        openai_tool_calls([("call_1", "read_file", read("a")), ("call_1", "read_file", read("b"))]),
        openai_tool_calls([("call_1", "read_file", read("c"))]),
        openai_text("all read"),
        openai_text("still fine"),
    )
    ed = start_nvim(config_file=fast_config(""), cwd=project)
    bufnr = ed.open_chat()
    ed.send("@{read_file} read them")
    turn_done(ed, timeout=20)
    ed.send("and now?")
    turn_done(ed, 2)
    assert "still fine" in ed.text(bufnr)
    assert len(provider_server.requests) == 4
    for request in provider_server.requests[1:]:
        check_openai(request.json()["messages"])
    last = provider_server.requests[-1].json()["messages"]
    results = [m for m in last if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == ["call_1", "call_1_2", "call_1_3"]
    for result, name in zip(results, "abc", strict=True):
        assert f"contents of {name}" in result["content"]
    calls = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert calls == ["call_1", "call_1_2", "call_1_3"]
    saved = saved_chat(ed)["messages"]
    check_saved_messages(saved)
    assert json.dumps(saved).count("contents of b") >= 1
