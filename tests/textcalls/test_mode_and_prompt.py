"""Which way tools are offered (settings, patterns, Ollama's capabilities) and prompt-mode text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.config import load_config
from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.messages import Message, ToolCall
from codecompanion.textcalls.mode import configured_mode, recovers, resolve_mode, setting_problem
from codecompanion.textcalls.prompt import (
    ToolText,
    describe,
    prompt_history,
    result_text,
    tools_prompt,
)

CALC = ToolText(
    "calculator",
    "Do arithmetic",
    {
        "type": "object",
        "properties": {
            "num1": {"type": "integer", "description": "The first number"},
            "op": {"type": "string", "enum": ["add", "multiply"]},
            "note": {"type": ["string", "null"]},
        },
        "required": ["num1", "op"],
    },
)


@pytest.mark.parametrize(
    ("setting", "model", "mode"),
    [
        ("prompt", "m", "prompt"),
        ("native", None, "native"),
        ("bogus", "m", "auto"),
        ({"qwen*": "prompt", "*": "native"}, "qwen2.5:1.5b", "prompt"),
        ({"qwen*": "prompt", "*": "native"}, "llama3", "native"),
        ({"qwen*": "prompt"}, "llama3", "auto"),
        ({"qwen*": "prompt"}, None, "auto"),
    ],
)
def test_configured_mode(setting: Any, model: str | None, mode: str) -> None:
    assert configured_mode(setting, model) == mode


def test_bad_settings_are_one_line_errors_and_dropped(tmp_path: Path) -> None:
    assert setting_problem("x", {"tool_calls": "prompt", "recover_text_calls": False}) is None
    assert "must be 'native', 'prompt' or 'auto'" in (
        setting_problem("x", {"tool_calls": "text"}) or ""
    )
    assert "True or False" in (setting_problem("x", {"recover_text_calls": "no"}) or "")
    path = tmp_path / "config.py"
    path.write_text("adapters = {'ollama': {'model': 'q', 'tool_calls': {'q*': 'xml'}}}\n")
    config = load_config(path)
    assert config.error is not None and config.error.startswith(f"{path}:1: adapters['ollama']")
    assert config.adapters == {"ollama": {"model": "q"}}


class Fake:
    def __init__(self, extra: dict[str, Any], answer: Any = None) -> None:
        self.name = "fake"
        self.settings = AdapterSettings(name="fake", model="m", extra=extra)
        self.answer = answer
        self.asked: list[str] = []

    async def supports_tools(self, model: str) -> bool | None:
        self.asked.append(model)
        if isinstance(self.answer, Exception):
            raise self.answer
        return bool(self.answer) if self.answer is not None else None


@pytest.mark.parametrize(
    ("extra", "answer", "mode", "asked"),
    [
        ({}, False, "prompt", True),
        ({}, True, "native", True),
        ({}, None, "native", True),  # capabilities not reported: native, as before
        ({}, OSError("down"), "native", True),
        ({"tool_calls": "native"}, False, "native", False),
        ({"tool_calls": "prompt"}, True, "prompt", False),
    ],
)
async def test_resolve_mode(extra: dict[str, Any], answer: Any, mode: str, asked: bool) -> None:
    adapter = Fake(extra, answer)
    assert await resolve_mode(adapter, "m") == mode
    assert bool(adapter.asked) == asked
    assert recovers(adapter) and not recovers(Fake({"recover_text_calls": False}))


async def test_ollama_reports_capabilities_once_per_model(
    provider_server: LoopbackServer,
) -> None:
    provider_server.enqueue(
        Turn.json({"capabilities": ["completion"]}),
        Turn.json({"capabilities": ["completion", "tools"]}),
        Turn.json({"modelfile": "old ollama"}),
        path="/api/show",
    )
    adapter = create_adapter(AdapterSettings(name="ollama", url=provider_server.url))
    try:
        assert await resolve_mode(adapter, "qwen-small") == "prompt"
        assert await resolve_mode(adapter, "qwen-small") == "prompt"  # asked once
        assert await resolve_mode(adapter, "llama3.1") == "native"
        assert await resolve_mode(adapter, "old") == "native"
    finally:
        await adapter.aclose()
    bodies = [r.json() for r in provider_server.requests]
    assert [r.path for r in provider_server.requests] == ["/api/show"] * 3
    assert [b["model"] for b in bodies] == ["qwen-small", "llama3.1", "old"]


def test_generated_description() -> None:
    text = describe(CALC)
    assert text.startswith("### calculator\n\nDo arithmetic\n\nParameters:")
    assert "- `num1` (integer; required): The first number" in text
    assert '- `op` (string; required; one of "add", "multiply")' in text
    assert "- `note` (string or null; optional)" in text
    assert "<num1>1</num1>" in text and "<op>add</op>" in text
    assert describe(ToolText("own", "", {}, own_prompt=True)) == ""
    assert "### own" not in tools_prompt([ToolText("own", "", {}, own_prompt=True)])


def test_result_text_default_and_a_worded_result() -> None:
    call = ToolCall("c1", "calculator", {"num1": 2, "op": "add"})
    assert result_text(call, "4", False, CALC) == (
        "The `calculator` tool call (num1=2, op=add) returned:\n\n```\n4\n```"
    )
    assert "failed" in result_text(call, "bad", True, CALC)
    fenced = result_text(call, "```py\nx\n```", False, None)
    assert fenced.count("````") == 2
    worded = ToolText("calculator", "", {}, worded=True)
    assert result_text(call, "The output was: 4", False, worded) == "The output was: 4"
    assert "returned" in result_text(call, "  ", False, worded)  # nothing worded: the default


def test_history_of_native_and_recovered_calls_becomes_text() -> None:
    native = ToolCall("n1", "calculator", {"num1": 1, "op": "add"})
    history = [
        Message(role="system", content="main prompt"),
        Message(role="system", content="tool prompt"),
        Message(role="user", content="hi"),
        Message(role="llm", content="Let me see."),
        Message(role="llm", visible=False, tool_calls=[native]),
        Message(role="tool", content="1", tool_call_id="n1", tool_name="calculator"),
        Message(role="llm", content="It is 1."),
        Message(role="llm", content="text with its <tool> block"),
        Message(
            role="llm",
            visible=False,
            tool_calls=[ToolCall("p1", "calculator", {"num1": 2, "op": "add"})],
            extra={"text_calls": "prompt"},
        ),
        Message(role="tool", content="2", tool_call_id="p1", tool_name="calculator"),
        Message(role="tool", content="late", tool_call_id="gone", tool_name="x"),
    ]
    out = prompt_history(history, [CALC])
    assert [m.role for m in out] == ["system", "user", "llm", "user", "llm", "user"]
    assert out[0].content is not None and out[0].content.startswith("main prompt\n\ntool prompt")
    assert "## Tools" in out[0].content
    assert out[2].content is not None
    assert out[2].content.startswith("Let me see.\n\n```xml\n<tool>\n  <name>calculator</name>")
    assert "returned" in (out[3].content or "")
    assert out[4].content == "It is 1.\n\ntext with its <tool> block"  # no second block
    assert "(num1=2, op=add)" in (out[5].content or "") and "`x` call" in (out[5].content or "")
    assert all(m.role != "tool" and not m.tool_calls for m in out)
