"""Prompt mode: tools described in the system prompt, and history rewritten without `tools`.

A model offered no `tools` must learn them from the system prompt and see calls and results
as text: its own call blocks stay in its answers, calls made natively earlier (or recovered)
are written out as XML blocks, and each result becomes a user message (the tool's
`output_prompt` when it has one).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message, ToolCall

# How the calls message of an answer says its calls were written in the answer's text.
TEXT_CALLS = "text_calls"
PROMPT = "prompt"
RECOVERED = "recovered"

HOW_TO_CALL = """\
## Tools

You can use the tools described below. To use one, write a call block in your answer, \
exactly in this form (one block per call; several blocks for several calls):

```xml
<tool>
  <name>TOOL_NAME</name>
  <parameters>
    <ARGUMENT_NAME>value</ARGUMENT_NAME>
  </parameters>
</tool>
```

A JSON block is accepted too:

```json
{"name": "TOOL_NAME", "arguments": {"ARGUMENT_NAME": "value"}}
```

After the call blocks, stop: the results come back in the next message, and then you \
continue. Never write a tool's result yourself. Only use the tools listed here; answer \
without a call block when no tool is needed."""


@dataclass(frozen=True)
class ToolText:
    """What prompt mode needs of one offered tool."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    own_prompt: bool = False  # its system_prompt function describes it (a system message already)
    worded: bool = False  # its `output_prompt` already wrote the result as a message to the model


def _escape(text: str) -> str:
    """`text` safe inside an XML element (the html module's tables cost the host 0.5 MB)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def describe(tool: ToolText) -> str:
    """The tool made from its schema for the system prompt ("" when it describes itself)."""
    if tool.own_prompt:
        return ""
    lines = [f"### {tool.name}", "", tool.description.strip() or tool.name]
    props = tool.parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = set(tool.parameters.get("required") or ())
    if props:
        lines += ["", "Parameters:"]
        for key, schema in props.items():
            lines.append(_parameter_line(key, schema, key in required))
    example = xml_call(tool.name, {key: _example(schema) for key, schema in props.items()})
    lines += ["", "Example call:", "", "```xml", example, "```"]
    return "\n".join(lines)


def _parameter_line(key: str, schema: Any, required: bool) -> str:
    schema = schema if isinstance(schema, Mapping) else {}
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind)
    parts = [str(kind), "required" if required else "optional"]
    if isinstance(schema.get("enum"), list):
        parts.append("one of " + ", ".join(json.dumps(v) for v in schema["enum"]))
    text = f"- `{key}` ({'; '.join(parts)})"
    description = schema.get("description")
    return f"{text}: {description}" if description else text


def _example(schema: Any) -> Any:
    schema = schema if isinstance(schema, Mapping) else {}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    examples = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
    return examples.get(str(kind), "...")


def xml_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as the XML block the model is asked to write."""
    lines = ["<tool>", f"  <name>{_escape(name)}</name>", "  <parameters>"]
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"    <{key}>{_escape(text)}</{key}>")
    lines += ["  </parameters>", "</tool>"]
    return "\n".join(lines)


def tools_prompt(tools: Iterable[ToolText]) -> str:
    """The system prompt section that teaches the call format and lists the tools."""
    return "\n\n".join([HOW_TO_CALL, *filter(None, (describe(tool) for tool in tools))])


def result_text(call: ToolCall, content: str, is_error: bool, tool: ToolText | None) -> str:
    """A result as the user message the model reads: a default naming the tool and the call.

    A tool with an `output_prompt` (CodeCompanion's older field) has already worded its result
    as a message to the model: that text is sent as it is. A failed call (invalid arguments, a
    rejection, a tool not offered: nothing the tool worded) always says that it failed.
    """
    if tool is not None and tool.worded and not is_error and content.strip():
        return content
    summary = ", ".join(
        f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
        for k, v in call.arguments.items()
    )
    if len(summary) > 200:
        summary = summary[:199] + "…"
    what = f"The `{call.name}` tool call ({summary})" if summary else f"The `{call.name}` call"
    verdict = "failed" if is_error else "returned"
    ticks = "`" * max(3, _longest_backticks(content) + 1)
    return f"{what} {verdict}:\n\n{ticks}\n{content.rstrip()}\n{ticks}"


def _longest_backticks(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def prompt_history(messages: Sequence[Message], tools: Sequence[ToolText]) -> list[Message]:
    """The history as sent in prompt mode: one system message, calls and results as text."""
    by_name = {tool.name: tool for tool in tools}
    calls = {c.id: c for m in messages if m.role == "llm" for c in m.tool_calls}
    system = [m.content or "" for m in messages if m.role == "system" and m.content]
    if tools:
        system.append(tools_prompt(tools))
    out: list[Message] = []
    if system:
        out.append(Message(role="system", content="\n\n".join(system)))
    for message in messages:
        text = _as_text(message, calls, by_name)
        if text:
            _add(out, "user" if message.role == "tool" else message.role, text)
    return out


def _as_text(
    message: Message, calls: Mapping[str, ToolCall], by_name: Mapping[str, ToolText]
) -> str | None:
    """What one message of the history says in prompt mode (None: nothing)."""
    if message.role == "system":
        return None  # joined into the one system message
    if message.role == "tool":
        call_id = message.tool_call_id or ""
        call = calls.get(call_id) or ToolCall(call_id, message.tool_name or "tool")
        return result_text(call, message.content or "", message.is_error, by_name.get(call.name))
    if message.role == "llm" and message.tool_calls:
        if message.extra.get(TEXT_CALLS) == PROMPT:
            return None
        # The answer's text lacks these calls: they are written out as the model would have.
        return "\n\n".join(
            f"```xml\n{xml_call(c.name, c.arguments)}\n```" for c in message.tool_calls
        )
    return message.content


def _add(out: list[Message], role: str, text: str) -> None:
    """Append, joining onto the previous message of the same role (results of one batch)."""
    if out and out[-1].role == role and role in ("user", "llm"):
        out[-1] = Message(role=out[-1].role, content=f"{out[-1].content}\n\n{text}")
    else:
        out.append(Message(role=role, content=text))  # type: ignore[arg-type]
