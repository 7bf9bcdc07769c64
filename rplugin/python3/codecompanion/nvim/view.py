"""The chat buffer as a ChatView: render operations coalesced and flushed once per frame."""

from __future__ import annotations

import asyncio
from typing import Any

from ..ports import RenderOp
from .bridge import Bridge

FRAME = 0.016  # seconds: at most one call into Lua per frame per chat


class NvimChatView:
    """Queues render operations and sends them to Lua in one `exec_lua` per frame.

    Streamed text is paced: batches of appends leave at most one frame apart. Any other
    operation (a header, a tool status, an event, the end of an answer) goes out on the
    loop's next turn, with whatever text is queued before it.
    """

    def __init__(self, bridge: Bridge, bufnr: int) -> None:
        self.bridge = bridge
        self.bufnr = bufnr
        self._ops: list[dict[str, Any]] = []
        # Appended text is kept as pieces and joined once per batch: `+=` on a dict value
        # copies the whole pending string for every streamed chunk.
        self._text: list[str] = []
        self._timer: asyncio.Handle | None = None
        self._last_flush = float("-inf")

    def render(self, ops: list[RenderOp]) -> None:
        """Queue operations; consecutive appends merge so a batch carries one string."""
        urgent = False
        for op in ops:
            if op.kind == "append":
                self._text.append(op.data["text"])
                continue
            self._close_text()
            self._ops.append({"kind": op.kind, **op.data})
            urgent = True
        if not (self._ops or self._text):
            return
        loop = self.bridge.loop
        wait = 0.0 if urgent else self._last_flush + FRAME - loop.time()
        if self._timer is not None:
            if not urgent or not isinstance(self._timer, asyncio.TimerHandle):
                return  # already due at least as soon
            self._timer.cancel()
        if wait > 0:
            self._timer = loop.call_later(wait, self.flush)
        else:
            self._timer = loop.call_soon(self.flush)

    def _close_text(self) -> None:
        if self._text:
            self._ops.append({"kind": "append", "text": "".join(self._text)})
            self._text = []

    def flush(self) -> None:
        """Send everything queued now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._close_text()
        if not self._ops:
            return
        ops, self._ops = self._ops, []
        self._last_flush = self.bridge.loop.time()
        self.bridge.notify_lua("codecompanion.render", "apply", self.bufnr, ops)

    def notify(self, message: str, level: str = "info") -> None:
        """One line to the user, in order with the buffer updates."""
        self.render([RenderOp("notice", {"text": " ".join(message.split()), "level": level})])
