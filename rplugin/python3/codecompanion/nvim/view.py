"""The chat buffer as a ChatView: render operations coalesced and flushed once per frame."""

from __future__ import annotations

import asyncio
from typing import Any

from ..ports import RenderOp
from .bridge import Bridge

FRAME = 0.016  # seconds: at most one call into Lua per frame per chat


class NvimChatView:
    """Queues render operations and sends them to Lua in one `exec_lua` per frame."""

    def __init__(self, bridge: Bridge, bufnr: int) -> None:
        self.bridge = bridge
        self.bufnr = bufnr
        self._ops: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None

    def render(self, ops: list[RenderOp]) -> None:
        """Queue operations; consecutive appends merge so a batch carries one string."""
        for op in ops:
            if op.kind == "append" and self._ops and self._ops[-1]["kind"] == "append":
                self._ops[-1]["text"] += op.data["text"]
            else:
                self._ops.append({"kind": op.kind, **op.data})
        if self._timer is None:
            self._timer = self.bridge.loop.call_later(FRAME, self.flush)

    def flush(self) -> None:
        """Send everything queued now."""
        self._timer = None
        if not self._ops:
            return
        ops, self._ops = self._ops, []
        self.bridge.notify_lua("codecompanion.render", "apply", self.bufnr, ops)

    def notify(self, message: str, level: str = "info") -> None:
        """One line to the user, in order with the buffer updates."""
        self.render([RenderOp("notice", {"text": " ".join(message.split()), "level": level})])
