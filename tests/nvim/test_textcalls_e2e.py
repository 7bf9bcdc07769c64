"""Calls written as text on real Neovim, against scripted provider streams.

The calculator runs from a ```json block in native mode (recovery) and from an XML block in
prompt mode; the buffer shows the usual tool line, never the raw block, and the provider gets
a history it accepts (a proper tool call and result, or text only in prompt mode).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.e2e import CALCULATOR, prompt_mode
from tests.support.nvim import Editor

StartNvim = Callable[..., Editor]
JSON_CALL = (
    'I will use the calculator.\n```json\n{"name": "calculator", "arguments": '
    '{"num1": 100, "num2": 50, "operation": "multiply"}}\n```'
)
XML_CALL = (
    "```xml\n<tool>\n  <name>calculator</name>\n  <parameters>\n    <num1>100</num1>\n"
    "    <num2>50</num2>\n    <operation>multiply</operation>\n  </parameters>\n</tool>\n```"
)


def test_recovered_call_runs_and_shows_as_a_tool_line(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text(JSON_CALL, chunks=9), openai_text("100 * 50 = 5000"))
    ed = start_nvim(config_file=config_file(CALCULATOR))
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("Use the @{calculator} tool for 100*50")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    text = ed.text(bufnr)
    assert "I will use the calculator." in text and "**calculator**" in text
    assert '"arguments"' not in text and "```json" not in text
    assert "100 * 50 = 5000" in text
    second = provider_server.requests[1].json()
    assert [t["function"]["name"] for t in second["tools"]] == ["calculator"]
    calls = [m for m in second["messages"] if m.get("tool_calls")]
    assert calls[0]["content"] == "I will use the calculator.\n"
    call_id = calls[0]["tool_calls"][0]["id"]
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": call_id, "content": "5000"}


def test_prompt_mode_end_to_end(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text(XML_CALL, chunks=13), openai_text("It is 5000."))
    ed = start_nvim(config_file=prompt_mode(config_file, CALCULATOR))
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("Use the @{calculator} tool for 100*50")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    text = ed.text(bufnr)
    assert "**calculator**" in text and "<tool>" not in text and "It is 5000." in text
    first = provider_server.requests[0].json()
    assert "tools" not in first
    assert first["messages"][0]["role"] == "system"
    assert "<name>TOOL_NAME</name>" in first["messages"][0]["content"]
    second = provider_server.requests[1].json()["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert "<name>calculator</name>" in second[2]["content"]
    assert second[3]["content"].startswith("The `calculator` tool call (num1=100")
    assert "5000" in second[3]["content"]
