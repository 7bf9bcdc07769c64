"""The hooks around a model loop's turn: SessionStart (the first turn of an opened chat, new or
restored, and the first after the chat is cleared), UserPromptSubmit (before the user's message
goes out) and Stop (when the model is done: a hook may send it back to work, a few times per
turn at most)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..messages import Message, MessageStore
from .chat_hooks import ChatHooks

MAX_STOP_BLOCKS = 3  # Stop hooks that send the model back, per turn: a loop ends there
SESSION_TAG = "hook:SessionStart"


@dataclass
class TurnHooks:
    """One chat's turn hooks, over its messages."""

    hooks: ChatHooks
    messages: MessageStore
    add: Callable[[Message], Message]
    started: int | None = None  # the store's `clears` when SessionStart last fired
    stop_blocks: int = 0

    async def before(self) -> bool:
        """SessionStart (once) and UserPromptSubmit; False when a hook blocked the prompt
        (the message is taken back: it is not sent, and a line said why)."""
        self.stop_blocks = 0
        await self._session_start()
        user = self._last_user()
        if user is None or not self.hooks.has("UserPromptSubmit"):
            return True
        said = await self.hooks.fire("UserPromptSubmit", {"prompt": user.content or ""})
        if said.blocked:
            self.messages.truncate(len(self.messages) - 1)
            return False
        if said.context:
            user.content = "\n\n".join([user.content or "", *said.context])
        return True

    async def after(self) -> bool:
        """Stop: True when a hook sends the model back to work (its reason becomes a message)."""
        if not self.hooks.has("Stop"):
            return False
        active = self.stop_blocks > 0
        said = await self.hooks.fire("Stop", {"stop_hook_active": active})
        if not said.blocked or self.stop_blocks >= MAX_STOP_BLOCKS:
            return False
        self.stop_blocks += 1
        text = f"A Stop hook asks you to go on before you finish: {said.reason}"
        self.add(Message(role="user", content=text, visible=False))
        return True

    async def _session_start(self) -> None:
        clears = self.messages.clears
        if self.started == clears:
            return
        cleared, self.started = self.started is not None, clears
        if not self.hooks.has("SessionStart"):
            return
        if cleared:  # what the hooks said before the clear is stale: they are asked again
            self.messages.remove_where(SESSION_TAG)
        earlier = any(m.role == "llm" for m in self.messages)
        source = "clear" if cleared else "resume" if earlier else "startup"
        said = await self.hooks.fire("SessionStart", {"source": source})
        if said.context:
            position = sum(1 for m in self.messages if m.role == "system")
            self.messages.insert_system("\n\n".join(said.context), SESSION_TAG, position)

    def _last_user(self) -> Message | None:
        last = self.messages[len(self.messages) - 1] if len(self.messages) else None
        return last if last is not None and last.role == "user" else None
