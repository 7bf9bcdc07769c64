"""A finished chat read back in CodeCompanion's message shape: its calls and its last answer.

Both plugins keep a chat's history in the same shape (an `llm` message carries `tools.calls`, a
`tool` message answers one call by `tools.call_id`), so one reader counts both the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A tool call the model wrote as text and that was left unrun when the turn ended.
UNRUN_CALL = re.compile(
    r"<tool_call>|<tool>\s*<name>|```(?:json)?\s*\{\s*\"(?:name|function|tool)\"\s*:", re.S
)


@dataclass(frozen=True)
class Call:
    """One call the model made, and the text its result gave back."""

    name: str
    arguments: str
    result: str
    malformed: bool = False

    def key(self) -> tuple[str, str]:
        """What makes two calls the same: the name and the decoded arguments."""
        try:
            decoded = json.dumps(json.loads(self.arguments), sort_keys=True)
        except ValueError:
            decoded = self.arguments.strip()
        return self.name, decoded


@dataclass
class Transcript:
    """What one run of a plugin left: its calls, last answer, how it ended, questions asked."""

    answer: str = ""
    calls: list[Call] = field(default_factory=list)
    ended: str = "done"
    questions: int = 0
    detail: str = ""

    def repeated_calls(self) -> int:
        """Calls identical (name and arguments) to an earlier call of the same run."""
        seen: set[tuple[str, str]] = set()
        repeats = 0
        for call in self.calls:
            key = call.key()
            repeats += key in seen
            seen.add(key)
        return repeats

    def malformed_calls(self) -> int:
        """Calls refused as malformed, plus a call written as text the turn ended on."""
        unrun = 1 if UNRUN_CALL.search(self.answer) else 0
        return sum(call.malformed for call in self.calls) + unrun


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def read_messages(
    messages: Iterable[Mapping[str, Any]], malformed: re.Pattern[str]
) -> tuple[list[Call], str]:
    """The calls (with their results) and the last non-empty answer of a stored history.

    `malformed` matches the text a plugin answers a malformed call with.
    """
    pending: list[tuple[str, str, str]] = []
    results: dict[str, str] = {}
    answer = ""
    for message in messages:
        tools = message.get("tools") or {}
        if message.get("role") == "llm":
            for call in tools.get("calls") or []:
                function = call.get("function") or {}
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                pending.append((str(call.get("id")), str(function.get("name")), arguments))
            text = _text(message.get("content")).strip()
            if text:
                answer = text
        elif message.get("role") == "tool" and tools.get("call_id") is not None:
            results[str(tools["call_id"])] = _text(message.get("content"))
    calls = []
    for call_id, name, arguments in pending:
        result = results.get(call_id, "")
        calls.append(Call(name, arguments, result, bool(malformed.search(result))))
    return calls, answer
