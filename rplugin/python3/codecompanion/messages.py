"""The message store: a chat's history in CodeCompanion's shape, and the values in it."""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

log = logging.getLogger("codecompanion.messages")

# `@{name}` in a user message: a tool or group offered from then on (one definition).
MENTION = re.compile(r"@\{([^{}\s]+)\}")

Role = Literal["user", "llm", "system", "tool"]
ROLES: tuple[Role, ...] = ("user", "llm", "system", "tool")
INTERRUPTED = (
    "The tool call did not finish: the editor's Python host stopped while it was pending or "
    "running, so its result (and whether it changed anything) is unknown."
)

# How a tool call ended.
Status = Literal["success", "error", "rejected", "cancelled", "timeout"]


@dataclass
class ToolCall:
    """A request from the model to run one tool.

    `arguments` is the decoded object; when the model sent text that is not valid JSON,
    `arguments` is empty and `raw_arguments` keeps the text for the tool system to repair or reject.
    `asks` marks a call read from the answer's text that the user approves whatever the
    rules or YOLO say (not stored: a restored chat's calls have run or been answered).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None
    asks: bool = False

    def arguments_json(self) -> str:
        """The arguments as the JSON text providers expect in history."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """CodeCompanion's stored shape of a call (OpenAI function form)."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_json()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        """Read a call back from its stored shape."""
        function = data.get("function") or {}
        raw = function.get("arguments")
        if isinstance(raw, dict):
            return cls(str(data.get("id", "")), str(function.get("name", "")), raw)
        text = raw if isinstance(raw, str) else ""
        try:
            decoded = json.loads(text) if text.strip() else {}
        except ValueError:
            return cls(str(data.get("id", "")), str(function.get("name", "")), {}, text)
        if not isinstance(decoded, dict):
            return cls(str(data.get("id", "")), str(function.get("name", "")), {}, text)
        return cls(str(data.get("id", "")), str(function.get("name", "")), decoded)


@dataclass(frozen=True)
class ToolResult:
    """The one answer a call gets: status, text for the model, text for the user.

    `MessageStore.record_result` is the only place it becomes part of a history.
    """

    status: Status
    for_llm: str
    for_user: str | None = None
    full_output: str | None = None
    detail: str = ""

    @property
    def is_error(self) -> bool:
        """Anything but success is an error for the provider."""
        return self.status != "success"


@dataclass
class Meta:
    """Bookkeeping CodeCompanion keeps under `_meta`."""

    id: int
    cycle: int = 1
    index: int = 0
    sent: bool = False


@dataclass
class Message:
    """One entry of a chat's history.

    An `llm` message either carries text (`content`) or, hidden, the model's `tool_calls`.
    A `tool` message answers exactly one call: `tool_call_id`, `tool_name`, `is_error`.
    """

    role: Role
    content: str | None = None
    visible: bool = True
    meta: Meta = field(default_factory=lambda: Meta(id=0))
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    tag: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """CodeCompanion's stored shape, as saved chats hold it."""
        data: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "opts": {"visible": self.visible},
            "_meta": {
                "id": self.meta.id,
                "cycle": self.meta.cycle,
                "index": self.meta.index,
                "sent": self.meta.sent,
            },
        }
        if self.tag:
            data["_meta"]["tag"] = self.tag
        if self.reasoning is not None:
            data["reasoning"] = {"content": self.reasoning}
        if self.tool_calls:
            # `_index`: the call's place among the answer's calls, as CodeCompanion stores it.
            calls = [{**call.to_dict(), "_index": i} for i, call in enumerate(self.tool_calls)]
            data["tools"] = {"calls": calls}
        if self.tool_call_id is not None:
            data["tools"] = {
                "call_id": self.tool_call_id,
                "name": self.tool_name,
                "is_error": self.is_error,
                "type": "tool_result",
            }
        if self.extra:
            data["extra"] = self.extra
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Read a message back from its stored shape."""
        role = data.get("role")
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        meta_data = data.get("_meta") or {}
        tools = data.get("tools") or {}
        reasoning = data.get("reasoning")
        if isinstance(reasoning, dict):
            reasoning = reasoning.get("content")
        return cls(
            role=role,
            content=data.get("content"),
            visible=bool((data.get("opts") or {}).get("visible", True)),
            meta=Meta(
                id=int(meta_data.get("id", 0)),
                cycle=int(meta_data.get("cycle", 1)),
                index=int(meta_data.get("index", 0)),
                sent=bool(meta_data.get("sent", False)),
            ),
            reasoning=reasoning if isinstance(reasoning, str) else None,
            tool_calls=[ToolCall.from_dict(c) for c in tools.get("calls", [])],
            tool_call_id=tools.get("call_id"),
            tool_name=tools.get("name"),
            is_error=bool(tools.get("is_error", False)),
            tag=meta_data.get("tag"),
            extra=dict(data.get("extra") or {}),
        )


class MessageStore:
    """The ordered history of one chat; ids and indexes are assigned here."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        self._ids = itertools.count(1)
        self.cycle = 1
        self.clears = 0  # how many times the conversation was cleared (SessionStart reads it)
        for message in messages:
            self._messages.append(message)
        if self._messages:
            top = max(m.meta.id for m in self._messages)
            self._ids = itertools.count(top + 1)
            self.cycle = max(m.meta.cycle for m in self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    def add(self, message: Message) -> Message:
        """Append a message, stamping its id, index and cycle.

        A tool result is kept only for a call of this history still without one: a late result
        (of a batch cancelled by a clear) or a second one would break the next request.
        """
        if message.role == "tool" and message.tool_call_id not in self._unanswered():
            log.warning("dropping a result for call %r, which awaits none", message.tool_call_id)
            return message
        message.meta = Meta(
            id=next(self._ids), cycle=self.cycle, index=len(self._messages), sent=message.meta.sent
        )
        self._messages.append(message)
        return message

    def remove_where(self, tag: str) -> None:
        """Drop every message carrying `tag` (system prompts that are rebuilt)."""
        self._messages = [m for m in self._messages if m.tag != tag]

    def insert_system(self, content: str, tag: str, position: int = 0) -> Message:
        """Insert a hidden system message at `position`, replacing any with the same tag."""
        self.remove_where(tag)
        message = Message(role="system", content=content, visible=False, tag=tag)
        message.meta = Meta(id=next(self._ids), cycle=self.cycle, index=position)
        self._messages.insert(min(position, len(self._messages)), message)
        for index, item in enumerate(self._messages):
            item.meta.index = index
        return message

    def truncate(self, length: int) -> None:
        """Keep only the first `length` messages (regenerate drops the last answer)."""
        del self._messages[length:]

    def clear(self) -> None:
        """Forget every message but the system prompts."""
        self._messages = [m for m in self._messages if m.role == "system"]
        self.cycle = 1
        self.clears += 1

    def _unanswered(self) -> set[str | None]:
        return {call.id for call in self.pending_calls()}

    def unique_calls(self, answer: Iterable[ToolCall] = ()) -> Callable[[ToolCall], ToolCall]:
        """Names an answer's calls: each renamed `<id>_<n>` if its id is already used in the
        history, in `answer`, or by a call named before it.

        Providers sometimes repeat an id (twice in one answer, or again later); every call
        needs its own id so that its one result can be told apart in every provider's shape.
        The history is read once per answer, not once per call.
        """
        taken = {c.id for m in self._messages for c in m.tool_calls}
        taken |= {m.tool_call_id for m in self._messages if m.tool_call_id is not None}
        taken |= {c.id for c in answer}

        def name(call: ToolCall) -> ToolCall:
            new = _fresh_id(call.id, taken)
            taken.add(new)
            return call if new == call.id else dataclasses.replace(call, id=new)

        return name

    def pending_calls(self) -> list[ToolCall]:
        """Calls the model made that have no result yet, in order."""
        answered = {m.tool_call_id for m in self._messages if m.role == "tool"}
        return [
            call
            for m in self._messages
            if m.role == "llm"
            for call in m.tool_calls
            if call.id not in answered
        ]

    def tool_result(self, call_id: str | None = None) -> Message | None:
        """The result message of call `call_id` (the last result when None)."""
        results = [m for m in self._messages if m.role == "tool" and m.tool_call_id]
        if call_id is None:
            return results[-1] if results else None
        return next((m for m in results if m.tool_call_id == call_id), None)

    def to_list(self) -> list[dict[str, Any]]:
        """Every message in its stored shape."""
        return [m.to_dict() for m in self._messages]

    def record_result(
        self,
        call: ToolCall,
        result: ToolResult,
        extra: dict[str, Any] | None = None,
        *,
        after_answer: bool = False,
    ) -> Message:
        """The one recorder: a call's result becomes the call's tool message here, and nowhere
        else (a result of the tool system, of a repeated call, one a stop or a crash left owed,
        one given to a saved chat's unanswered call on load).

        The message is appended, or with `after_answer` placed right after its answer's other
        results (a restored history goes on after them). A result for a call that awaits none
        is dropped (see `add`).
        """
        message = Message(
            role="tool",
            content=result.for_llm,
            tool_call_id=call.id,
            tool_name=call.name,
            is_error=result.is_error,
            extra=dict(extra or {}),
        )
        if result.for_user is not None:
            message.extra["for_user"] = result.for_user
        if not after_answer:
            return self.add(message)
        if call.id not in self._unanswered():
            log.warning("dropping a result for call %r, which awaits none", call.id)
            return message
        at = 1 + next(
            i
            for i, m in enumerate(self._messages)
            if m.role == "llm" and any(c.id == call.id for c in m.tool_calls)
        )
        cycle = self._messages[at - 1].meta.cycle
        while at < len(self._messages) and self._messages[at].role == "tool":
            at += 1
        message.meta = Meta(id=next(self._ids), cycle=cycle)
        self._messages.insert(at, message)
        for index, item in enumerate(self._messages):
            item.meta.index = index
        return message

    def answer_interrupted(self, text: str = INTERRUPTED) -> list[ToolCall]:
        """Give every call without a result an error result right after its answer's results.

        Only a writer that died while tools ran leaves such calls behind; answering them keeps
        the history valid for every provider. Returns the calls that were answered.
        """
        owed = self.pending_calls()
        for call in owed:
            self.record_result(
                call, ToolResult("error", text), {"interrupted": True}, after_answer=True
            )
        return owed

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> MessageStore:
        """Rebuild a store from saved messages; calls a crash left unanswered get a result."""
        messages = [Message.from_dict(item) for item in data]
        _unique_call_ids(messages)
        store = cls(messages)
        store.answer_interrupted()
        return store


def _fresh_id(base: str, taken: Container[str]) -> str:
    """`base`, or `<base>_<n>` with the smallest n from 2 that is not `taken`."""
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def _unique_call_ids(messages: list[Message]) -> None:
    """Rename repeated call ids of a saved history (as `MessageStore.unique_call` does for new
    answers); each result goes to the earliest call of its id still without one."""
    seen: set[str] = set()
    waiting: dict[str, list[str]] = {}  # id as sent → the (renamed) calls still owed a result
    for message in messages:
        if message.role == "llm" and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                new = _fresh_id(call.id, seen)
                seen.add(new)
                waiting.setdefault(call.id, []).append(new)
                calls.append(call if new == call.id else dataclasses.replace(call, id=new))
            message.tool_calls = calls
        elif message.role == "tool" and message.tool_call_id in waiting:
            owed = waiting[message.tool_call_id]
            if owed:
                message.tool_call_id = owed.pop(0)
