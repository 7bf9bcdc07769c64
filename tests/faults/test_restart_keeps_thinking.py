"""The host killed mid tool loop: Anthropic's signed thinking blocks and Gemini's thought
signatures are restored from the saved chat and sent back with the calls they led to."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn
from tests.support.e2e import approved_turn
from tests.support.faults import kill_host, saved_chat, turn_done
from tests.support.nvim import Editor, wait_for
from tests.support.proctable import wait_until_gone, with_marker
from tests.support.shapes import check_anthropic, check_gemini

StartNvim = Callable[..., Editor]


def anthropic_event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: " + json.dumps({"type": kind, **fields})


def anthropic_call(command: str) -> Turn:
    thinking = {"type": "thinking", "thinking": ""}
    use = {"type": "tool_use", "id": "toolu_1", "name": "run_command", "input": {}}
    return Turn.sse(
        [
            anthropic_event("message_start", message={"usage": {"input_tokens": 3}}),
            anthropic_event("content_block_start", index=0, content_block=thinking),
            anthropic_event(
                "content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hm."}
            ),
            anthropic_event(
                "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "S1"}
            ),
            anthropic_event("content_block_stop", index=0),
            anthropic_event("content_block_start", index=1, content_block=use),
            anthropic_event(
                "content_block_delta",
                index=1,
                delta={"type": "input_json_delta", "partial_json": json.dumps({"cmd": command})},
            ),
            anthropic_event("content_block_stop", index=1),
            anthropic_event("message_delta", delta={"stop_reason": "tool_use"}),
            anthropic_event("message_stop"),
        ]
    )


def anthropic_text(text: str) -> Turn:
    block = {"type": "text", "text": text}
    return Turn.sse(
        [
            anthropic_event("content_block_start", index=0, content_block=block),
            anthropic_event("content_block_stop", index=0),
            anthropic_event("message_delta", delta={"stop_reason": "end_turn"}),
            anthropic_event("message_stop"),
        ]
    )


def gemini_call(command: str) -> Turn:
    part = {"functionCall": {"name": "run_command", "args": {"cmd": command}}}
    part["thoughtSignature"] = "G1"
    content = {"role": "model", "parts": [part]}
    return Turn.sse([{"candidates": [{"content": content, "finishReason": "STOP"}]}])


def gemini_text(text: str) -> Turn:
    content = {"role": "model", "parts": [{"text": text}]}
    return Turn.sse([{"candidates": [{"content": content, "finishReason": "STOP"}]}])


def check_anthropic_body(body: dict[str, Any]) -> None:
    check_anthropic(body["messages"])
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Hm.", "signature": "S1"}
    assert assistant["content"][1]["type"] == "tool_use"


def check_gemini_body(body: dict[str, Any]) -> None:
    check_gemini(body["contents"])
    model = next(c for c in body["contents"] if c["role"] == "model")
    assert model["parts"][0]["thoughtSignature"] == "G1"


CASES = {
    "anthropic": (anthropic_call, anthropic_text, check_anthropic_body),
    "gemini": (gemini_call, gemini_text, check_gemini_body),
}


@pytest.mark.parametrize("adapter", list(CASES))
def test_thinking_survives_a_host_restart_mid_tool_loop(
    adapter: str,
    start_nvim: StartNvim,
    provider_server: LoopbackServer,
    marker: str,
    tmp_path: Path,
) -> None:
    call, text, check = CASES[adapter]
    settings = {"url": provider_server.url, "api_key": "k-test-key", "model": "m"}
    config = tmp_path / "codecompanion.py"
    config.write_text(f"adapter = {adapter!r}\nadapters = {{{adapter!r}: {settings!r}}}\n")
    provider_server.enqueue(call(f"sleep 60; echo {marker}"), text("after the restart"))
    request = "@{run_command} sleep a while"
    ed, bufnr = approved_turn(start_nvim, config, tmp_path / "project", request)
    shells = wait_for(lambda: with_marker(marker))
    kill_host(ed)
    assert wait_until_gone({p.pgid for p in shells}, 5) == []
    ed.send("what happened?")
    turn_done(ed)
    assert "after the restart" in ed.text(bufnr)
    check(provider_server.requests[-1].json())
    saved = saved_chat(ed)["messages"]
    assert any((m.get("extra") or {}).get("provider_state") for m in saved)
