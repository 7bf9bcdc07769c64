"""Calls written as text through the real chat and tool system, against scripted streams.

The adapter is scripted; the history each request would carry is checked with the real OpenAI
adapter's formatting, so recovered calls are proved to reach the provider as proper tool calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codecompanion.adapters.base import AdapterSettings, Event, Finish, TextDelta, ToolCallEvent
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.chat.chat import Chat
from codecompanion.messages import Message, ToolCall
from codecompanion.render_ops import Tool, ToolStatus
from codecompanion.textcalls.prompt import HOW_TO_CALL
from codecompanion.textcalls.session import REPEATED
from codecompanion.tools import tool_registry
from tests.support.builder import built_chat
from tests.support.chat import RecordingView
from tests.support.fakes import ScriptedApprover


def calculate(self: Any, args: dict[str, Any], *_: Any) -> dict[str, Any]:
    ops = {"add": lambda a, b: a + b, "multiply": lambda a, b: a * b}
    return {"status": "success", "data": ops[args["operation"]](args["num1"], args["num2"])}


CALCULATOR = {
    "name": "calculator",
    "cmds": [calculate],
    "schema": {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Perform simple mathematical operations on a user's machine",
            "parameters": {
                "type": "object",
                "properties": {
                    "num1": {"type": "integer", "description": "The first number"},
                    "num2": {"type": "integer", "description": "The second number"},
                    "operation": {"type": "string", "enum": ["add", "multiply"]},
                },
                "required": ["num1", "num2", "operation"],
                "additionalProperties": False,
            },
        },
    },
    "output": {
        "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(
            self, str(stdout[0])
        ),
    },
}
WORDED = {
    **CALCULATOR,
    "output": {},
    "output_prompt": lambda output: f"After the tool completed the output was: {output[0]}",
}
QWEN_BLOCK = (
    '```json\n{\n  "name": "calculator",\n  "arguments": {\n    "num1": 100,\n'
    '    "num2": 50,\n    "operation": "multiply"\n  }\n}\n```'
)
XML_BLOCK = (
    "```xml\n<tool>\n  <name>calculator</name>\n  <parameters>\n    <num1>100</num1>\n"
    "    <num2>50</num2>\n    <operation>multiply</operation>\n  </parameters>\n</tool>\n```\n"
)


@dataclass
class Adapter:
    """Streams one scripted answer per request, in small pieces; records what it was sent."""

    scripts: list[list[Any]]
    extra: dict[str, Any] = field(default_factory=dict)
    name: str = "openai_compatible"
    requests: list[tuple[list[Message], list[dict[str, Any]]]] = field(default_factory=list)
    capable: bool | None = None

    def __post_init__(self) -> None:
        self.settings = AdapterSettings(name=self.name, model="qwen", extra=self.extra)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        self.requests.append(([Message.from_dict(m.to_dict()) for m in messages], list(tools)))
        for item in self.scripts.pop(0):
            if isinstance(item, str):
                for start in range(0, len(item), 5):
                    yield TextDelta(item[start : start + 5])
            else:
                yield item
        yield Finish("stop")

    async def list_models(self) -> list[str]:
        return ["qwen"]

    async def aclose(self) -> None:
        pass


def make(
    adapter: Adapter,
    tmp_path: Path,
    approver: ScriptedApprover | None = None,
    tool_opts: dict[str, dict[str, Any]] | None = None,
) -> tuple[Chat, RecordingView, ScriptedApprover]:
    tool = WORDED if adapter.extra.get("tool_calls") == "prompt" else CALCULATOR
    registry = tool_registry({"calculator": tool}, {}, tool_opts=tool_opts or {})
    assert registry.errors == []
    approver = approver or ScriptedApprover()
    view = RecordingView()
    chat = built_chat(
        adapter, registry, tmp_path, view, chat_id="c1", approver=approver, opts={"timeout": 5}
    )
    return chat, view, approver


async def turn(chat: Chat, text: str) -> None:
    assert chat.submit(text)
    assert chat._task is not None
    await asyncio.wait_for(asyncio.shield(chat._task), 10)


def wire(messages: list[Message]) -> list[dict[str, Any]]:
    """The history as the OpenAI adapter would send it."""
    adapter = OpenAIAdapter(AdapterSettings(name="openai", api_key="k"))
    return adapter.format_messages(messages)


def assert_paired(history: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered by exactly one tool message right after it."""
    for index, entry in enumerate(history):
        ids = [c["id"] for c in entry.get("tool_calls") or []]
        answers = [m["tool_call_id"] for m in history[index + 1 : index + 1 + len(ids)]]
        assert answers == ids


async def test_recovered_call_runs_and_becomes_a_proper_tool_call(tmp_path: Path) -> None:
    adapter = Adapter([[QWEN_BLOCK], ["100 * 50 = 5000"]])
    chat, view, approver = make(adapter, tmp_path)
    await turn(chat, "Use the @{calculator} tool for 100*50")
    assert len(adapter.requests) == 2
    first, tools = adapter.requests[0]
    assert [t["function"]["name"] for t in tools] == ["calculator"]  # native mode
    second, _ = adapter.requests[1]
    history = wire(second)
    assert_paired(history)
    calls = [e for e in history if e.get("tool_calls")]
    assert len(calls) == 1 and calls[0]["content"] is None  # the block left the text
    assert calls[0]["tool_calls"][0]["function"]["name"] == "calculator"
    results = [e for e in history if e["role"] == "tool"]
    assert [r["content"] for r in results] == ["5000"]
    assert "```json" not in view.text() and "5000" in view.text()
    assert any(isinstance(op, Tool) and "calculator" in op.title for op in view.ops)
    stored = [m for m in chat.messages if m.role == "llm" and m.tool_calls]
    assert stored[0].extra == {"text_calls": "recovered"}


async def test_recovery_can_be_turned_off(tmp_path: Path) -> None:
    adapter = Adapter([[QWEN_BLOCK]], extra={"recover_text_calls": False})
    chat, view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} 100*50")
    assert len(adapter.requests) == 1
    assert "```json" in view.text()
    assert not chat.messages.pending_calls() and not any(m.tool_calls for m in chat.messages)


async def test_recovery_never_for_invalid_arguments_quotes_or_unknown_tools(
    tmp_path: Path,
) -> None:
    invalid = QWEN_BLOCK.replace('"num1": 100', '"num1": "hundred"')
    quoted = "For example:\n\n" + QWEN_BLOCK + "\n\nwould multiply them."
    unknown = QWEN_BLOCK.replace("calculator", "shell")
    for answer in (invalid, quoted, unknown):
        adapter = Adapter([[answer]])
        chat, view, _ = make(adapter, tmp_path)
        await turn(chat, "@{calculator} 100*50")
        assert len(adapter.requests) == 1, answer
        assert view.text().endswith(answer)
        assert not any(m.tool_calls for m in chat.messages)


async def test_native_calls_win_over_text_blocks(tmp_path: Path) -> None:
    native = ToolCall("call_n", "calculator", {"num1": 1, "num2": 2, "operation": "add"})
    adapter = Adapter([[QWEN_BLOCK, ToolCallEvent(native)], ["done"]])
    chat, view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} go")
    calls = [c for m in chat.messages for c in m.tool_calls]
    assert [c.id for c in calls] == ["call_n"]
    assert "```json" in view.text()


async def test_prompt_mode_sends_no_tools_and_results_as_messages(tmp_path: Path) -> None:
    adapter = Adapter(
        [["Let me compute.\n\n" + XML_BLOCK], ["The answer is 5000."]],
        extra={"tool_calls": "prompt"},
    )
    chat, view, approver = make(adapter, tmp_path)
    await turn(chat, "Use the @{calculator} tool for 100*50")
    first, tools = adapter.requests[0]
    assert tools == []
    assert [m.role for m in first] == ["system", "user"]
    system = first[0].content or ""
    assert HOW_TO_CALL in system and "### calculator" in system
    assert '- `operation` (string; required; one of "add", "multiply")' in system
    second, tools = adapter.requests[1]
    assert tools == [] and [m.role for m in second] == ["system", "user", "llm", "user"]
    assert "<name>calculator</name>" in (second[2].content or "")  # its own call, as written
    assert second[3].content == "After the tool completed the output was: 5000"
    assert all(not m.tool_calls and m.role != "tool" for m in second)
    shown = view.text()
    assert "Let me compute." in shown and "<tool>" not in shown and "5000." in shown
    assert any(isinstance(op, Tool) and "calculator" in op.title for op in view.ops)


async def test_prompt_mode_errors_go_back_once_per_call(tmp_path: Path) -> None:
    bad = XML_BLOCK.replace("<num1>100</num1>", "<num1>lots</num1>")
    other = "```xml\n<tool><name>shell</name><parameters><cmd>ls</cmd></parameters></tool>\n```\n"
    adapter = Adapter([[bad + other], ["sorry"]], extra={"tool_calls": "prompt"})
    chat, _view, approver = make(adapter, tmp_path)
    await turn(chat, "@{calculator} go")
    results = [m for m in chat.messages if m.role == "tool"]
    assert len(results) == 2 and all(r.is_error for r in results)
    assert "do not match its schema" in (results[0].content or "")
    assert "`shell` is not available" in (results[1].content or "")
    second, _ = adapter.requests[1]
    feedback = second[-1].content or ""
    assert feedback.count("failed") == 2 and "`calculator` tool call" in feedback
    assert approver.requests == []


async def test_rejected_text_call_gets_one_result_and_the_turn_goes_on(tmp_path: Path) -> None:
    adapter = Adapter([[XML_BLOCK], ["ok"]], extra={"tool_calls": "prompt"})
    opts = {"calculator": {"requires_approval": True}}
    chat, _view, approver = make(adapter, tmp_path, ScriptedApprover("reject"), opts)
    await turn(chat, "@{calculator} go")
    assert [r.tool_name for r in approver.requests] == ["calculator"]
    results = [m for m in chat.messages if m.role == "tool"]
    assert len(results) == 1 and results[0].is_error
    assert chat.messages.pending_calls() == []
    assert "failed" in (adapter.requests[1][0][-1].content or "")


async def test_auto_asks_the_provider_and_falls_back_to_prompt(tmp_path: Path) -> None:
    class NoTools(Adapter):
        async def supports_tools(self, model: str) -> bool | None:
            return False

    adapter = NoTools([["plain answer"]])
    chat, _view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} hi")
    assert adapter.requests[0][1] == []
    assert HOW_TO_CALL in (adapter.requests[0][0][0].content or "")


async def test_restored_prompt_mode_answer_shows_without_its_block(tmp_path: Path) -> None:
    from codecompanion.chat import transcript

    adapter = Adapter([["Computing.\n" + XML_BLOCK], ["5000"]], extra={"tool_calls": "prompt"})
    chat, _view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} go")
    ops = transcript.replay(list(chat.messages), "x", "m")
    texts = " ".join(str(getattr(op, "text", "")) for op in ops)
    assert "Computing." in texts and "<tool>" not in texts


async def test_a_repeated_text_call_is_answered_without_running_again(tmp_path: Path) -> None:
    adapter = Adapter([[QWEN_BLOCK], [QWEN_BLOCK], ["The answer is 5000."]])
    chat, view, approver = make(adapter, tmp_path)
    await turn(chat, "@{calculator} 100*50")
    assert len(adapter.requests) == 3
    results = [m.content for m in chat.messages if m.role == "tool"]
    assert results[0] == "5000" and results[1] == REPEATED
    assert_paired(wire(adapter.requests[2][0]))
    assert any(
        isinstance(op, ToolStatus) and op.detail == "same call as the round before"
        for op in view.ops
    )


async def test_a_model_that_keeps_repeating_is_stopped(tmp_path: Path) -> None:
    adapter = Adapter([[QWEN_BLOCK], [QWEN_BLOCK], [QWEN_BLOCK], ["never asked"]])
    chat, _view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} 100*50")
    assert len(adapter.requests) == 3
    results = [m.content for m in chat.messages if m.role == "tool"]
    assert results == ["5000", REPEATED, REPEATED]
    assert chat.messages.pending_calls() == []


async def test_the_same_call_after_another_one_runs_again(tmp_path: Path) -> None:
    other = QWEN_BLOCK.replace('"num1": 100', '"num1": 7')
    adapter = Adapter([[QWEN_BLOCK], [other], [QWEN_BLOCK], ["done"]])
    chat, _view, _ = make(adapter, tmp_path)
    await turn(chat, "@{calculator} go")
    results = [m.content for m in chat.messages if m.role == "tool"]
    assert results == ["5000", "350", "5000"]
