"""A subagent's session: its own messages and context, turned by the same model loop as a chat,
shown in the parent chat only as progress on the `agent` call's line.

It keeps the parent's chat id, so its approvals are asked in the parent's buffer; it is never
saved (the parent's saved chat holds the call and its one result) and fires no events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..adapters.secret_mask import masked_result
from ..messages import Message, MessageStore, Role, ToolCall, ToolResult
from ..ports import ChatView
from ..render_ops import Level, RenderOp, ToolStatus

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter
    from ..budget.keeper import ContextKeeper
    from ..checkpoints import ChatCheckpoints
    from ..tools.runtime.system import ToolSystem


class SubagentView:
    """What the subagent would draw, as progress on the parent's `agent` call: each of its
    calls named in the call's status; its notices in the parent's message area."""

    def __init__(self, parent: ChatView, call_id: str, name: str) -> None:
        self.parent = parent
        self.call_id = call_id
        self.name = name
        self.calls: list[str] = []  # the title of each call the subagent made

    def render(self, ops: list[RenderOp]) -> None:
        """The subagent's own text, headers and spinner stay its own: nothing is drawn."""

    def called(self, call: ToolCall) -> None:
        """A call of the subagent: named in the status of the parent's `agent` line."""
        self.calls.append(short(call))
        detail = f"{self.name}: {len(self.calls)} calls · {self.calls[-1]}"
        self.parent.render([ToolStatus(call_id=self.call_id, status="running", detail=detail)])

    def notify(self, message: str, level: Level = "info") -> None:
        """The subagent's one-line notices, named, in the parent's message area."""
        self.parent.notify(f"subagent {self.name}: {message}", level)

    def flush(self) -> None:
        """Send the parent's queued progress now."""
        self.parent.flush()

    def summary(self) -> str:
        """One line: the subagent and how many calls it made."""
        return f"Subagent `{self.name}`: {len(self.calls)} calls"

    def calls_text(self) -> str:
        """The calls it made, one line each."""
        return "\n".join(f"- {call}" for call in self.calls) or "- no tool calls"


class NoEvents:
    """A subagent's tools fire no `User` events: the parent's call fires its own."""

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Nothing."""


class SubagentSession:
    """The session a subagent's model loop turns (chat/driver.py's Session)."""

    def __init__(self, chat_id: str, adapter: ChatAdapter, view: SubagentView, prompt: str) -> None:
        self.id = chat_id
        self.adapter = adapter
        self.view: ChatView = view
        self.progress = view
        self.messages = MessageStore()
        self.messages.insert_system(prompt, "system_prompt", 0)
        self.checkpoints: ChatCheckpoints | None = None  # the parent captures around it
        self.tools: ToolSystem
        self.context: ContextKeeper
        self.secrets: set[str] = set()  # the parent chat's: masked in every tool result

    @property
    def model(self) -> str | None:
        """The subagent's model."""
        return self.adapter.settings.model

    def add(self, message: Message) -> Message:
        """Append a message (never saved)."""
        return self.messages.add(message)

    def fire(self, name: str, **extra: Any) -> None:
        """A subagent fires no events: the parent's chat fires its own."""

    def save(self) -> None:
        """Nothing to save: the parent's chat keeps the call and its result."""

    def save_now(self, durable: bool = True) -> None:
        """Nothing to save."""

    def show_approvals(self) -> None:
        """The parent's buffer shows its own approvals."""

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Store the call's one result (every known secret masked) in the subagent's history."""
        self.messages.record_result(call, masked_result(result, self.secrets), {})

    def add_tool_message(self, role: str, content: str, visible: bool) -> None:
        """A message tool code added (`tools.chat.add_message`): in the subagent's history."""
        kind: Role = "llm" if role == "llm" else "system" if role == "system" else "user"
        self.add(Message(role=kind, content=content, visible=visible))

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """A new call shows as progress on the parent's line."""
        if status == "pending":
            self.progress.called(call)

    def answer(self) -> str:
        """The subagent's last answer (its text, after its last tool round)."""
        for message in reversed(list(self.messages)):
            if message.role == "llm" and message.content and not message.extra.get("incomplete"):
                return message.content.strip()
        return ""


def short(call: ToolCall) -> str:
    """A call in a few words: the tool and its first text argument (a path, a command)."""
    text = next((v for v in call.arguments.values() if isinstance(v, str) and v.strip()), "")
    text = " ".join(text.split())
    return f"{call.name} {text[:60]}{'…' if len(text) > 60 else ''}".rstrip()
