"""The chat buffer as a ChatView: render operations coalesced and flushed once per frame."""

from __future__ import annotations

import asyncio
from typing import Any

from ..ports import RenderOp
from .bridge import Bridge

# Seconds: at most one call into Lua per frame per chat for progress. Short enough that a
# slowly streamed chunk is on screen within one frame of arriving.
FRAME = 0.008
# Progress: streamed text, tool lines and statuses, the spinner, and the events fired with
# them wait for the next frame, so a tool round sends its next request before Neovim is
# written to. Everything else (a header, the end of a turn, a notice, a question's status)
# goes out on the loop's next turn.
PACED = frozenset({"append", "block", "lock", "spinner", "tool", "tool_output", "usage"})
PACED_EVENTS = frozenset(
    {
        "RequestStarted",
        "RequestFinished",
        "ToolsStarted",
        "ToolStarted",
        "ToolFinished",
        "ToolsFinished",
    }
)

# A tool round holds progress back (at most HOLD seconds) from its start, and from its end
# until the next answer streams: Neovim is written to after the request has left, not while
# the tools run and the request is sent.
HOLD = 0.016
HOLD_FROM = frozenset({"ToolsStarted", "ToolsFinished"})


def _paced(op: RenderOp) -> bool:
    """True for an operation that may wait for the next frame."""
    if op.kind in PACED:
        return True
    if op.kind == "tool_status":
        return op.data.get("status") != "awaiting_approval"
    return op.kind == "event" and op.data.get("name") in PACED_EVENTS


class NvimChatView:
    """Queues render operations and sends them to Lua in one `exec_lua` per frame.

    Progress (see PACED) leaves at most one frame after the previous batch, or on the loop's
    next turn when the last batch is a frame old; any other operation goes out on the loop's
    next turn, with whatever is queued before it.
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
        self._hold_until = float("-inf")
        self._urgent = False  # the pending flush is for an urgent operation
        self._due = 0.0  # when the pending flush runs (loop time)

    def render(self, ops: list[RenderOp]) -> None:
        """Queue operations; consecutive appends merge so a batch carries one string."""
        urgent = False
        loop = self.bridge.loop
        for op in ops:
            if op.kind == "append":
                self._text.append(op.data["text"])
                continue
            self._close_text()
            self._ops.append({"kind": op.kind, **op.data})
            urgent = urgent or not _paced(op)
            if op.kind == "event":
                name = op.data.get("name")
                if name in HOLD_FROM:
                    self._hold_until = loop.time() + HOLD
                elif name == "RequestStreaming":
                    self._hold_until = float("-inf")
        if not (self._ops or self._text):
            return
        self._schedule(urgent)

    def _schedule(self, urgent: bool) -> None:
        """Flush on the loop's next turn (urgent), else when the frame and any hold allow."""
        loop = self.bridge.loop
        now = loop.time()
        due = now if urgent else max(self._last_flush + FRAME, self._hold_until, now)
        if self._timer is not None:
            if self._urgent or not urgent and (self._due == due or self._due <= now >= due):
                return  # already due at the right time
            self._timer.cancel()
        self._urgent, self._due = urgent, due
        if due > now:
            self._timer = loop.call_later(due - now, self.flush)
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
