"""The seam between a chat session and what produces its turns: a turn driver.

The session (`chat.Chat`) keeps the messages, the view, saving, checkpoints, the context and
the one recorder of tool results; a driver turns the user's text into the message it sends and
produces the turn's answers into the session. The model loop (`model_loop.ModelLoop`) is one
driver, an external agent over the Agent Client Protocol another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from ..outside import Json

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter
    from ..budget.keeper import ContextKeeper
    from ..checkpoints import ChatCheckpoints
    from ..context.sources import ContextItem
    from ..messages import Message, MessageStore, ToolCall, ToolResult
    from ..ports import ChatView
    from ..tools.runtime.system import ToolSystem

TurnStatus = Literal["success", "error", "cancelled"]


class Session(Protocol):
    """What a driver sees of the chat session."""

    id: str
    adapter: ChatAdapter
    view: ChatView
    messages: MessageStore
    tools: ToolSystem
    context: ContextKeeper
    checkpoints: ChatCheckpoints | None

    @property
    def model(self) -> str | None:
        """The model the chat's header and saved state name."""

    def add(self, message: Message) -> Message:
        """Append a message and save the chat soon."""

    def fire(self, name: str, **extra: Json) -> None:
        """Fire a User event ordered with the buffer updates around it."""

    def save(self) -> None:
        """Save soon (coalesced)."""

    def save_now(self, durable: bool = True) -> None:
        """Save at once."""

    def show_approvals(self) -> None:
        """Show the remembered approvals and YOLO state in the buffer's variables."""

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Store one call's one result and show it."""

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show a call's status on its line."""


class TurnDriver(Protocol):
    """Produces a chat's turns; the session runs `turn` as its one turn task."""

    # True when `/compact` typed as the whole message compacts the chat's own history; False
    # sends it on (an agent has its own `/compact`).
    compacts: bool

    def message(self, text: str, context: list[ContextItem]) -> Message | None:
        """The user's message as this driver sends it, or None when it is refused (the
        driver has said why, in one line)."""

    async def turn(self) -> TurnStatus:
        """Produce the answer to the messages so far (the user's is the last); the session
        ends the turn whatever happens (every call answered, saved, `## Me` back)."""

    def cancel(self) -> None:
        """Stop what runs beside the turn task (tools, an agent's prompt); the session then
        cancels the task itself."""

    def to_state(self) -> dict[str, str]:
        """What a saved chat keeps of the driver (an agent and its session); {} for none."""
