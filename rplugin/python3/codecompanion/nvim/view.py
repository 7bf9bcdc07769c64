"""The chat buffer as a ChatView: render operations coalesced and flushed once per frame."""

from __future__ import annotations

import asyncio

from ..render_ops import Append, Event, Level, Notice, RenderOp
from .bridge import Bridge

# Seconds: progress leaves at most one frame after the previous batch, and as soon as the
# stream has been quiet for QUIET (a slowly streamed chunk is shown about QUIET after it came),
# but never sooner than MIN_GAP after the previous batch (a fast stream is batched).
FRAME = 0.008
QUIET = 0.0015
MIN_GAP = 0.002
# Progress (each op's `paced()`, in render_ops.py: streamed text, tool lines and statuses,
# the spinner, and the events fired with them) waits for the next frame, so a tool round sends
# its next request before Neovim is written to. Everything else (a header, the end of a turn,
# a notice, a question's status) goes out on the loop's next turn.

# A tool round holds progress back (at most HOLD seconds) from its start, and from its end
# until the next answer streams: Neovim is written to after the request has left, not while
# the tools run and the request is sent (and answered: a busy Neovim beside the provider's
# local server slows it down). A user's message holds its turn's header, lock and spinner the
# same way, from the submission until the answer streams: Neovim draws them with the answer's
# first text (or HOLD after the Enter), not while the host sends the request and the answer
# comes in. A buffer variable or a header queued meanwhile waits with it (`HELD`).
HOLD = 0.016
HOLD_FROM = frozenset({"ToolsStarted", "ToolsFinished", "ChatSubmitted"})


class NvimChatView:
    """Queues render operations and sends them to Lua in one `exec_lua` per batch.

    Progress (an op whose `paced()` is true) waits for `_due`: the frame, a quiet stream, or
    the end of a tool round's hold; any other operation goes out on the loop's next turn, with
    whatever is queued before it.
    """

    def __init__(self, bridge: Bridge, bufnr: int) -> None:
        self.bridge = bridge
        self.bufnr = bufnr
        self._ops: list[dict[str, object]] = []
        # Appended text is kept as pieces and joined once per batch: `+=` on a dict value
        # copies the whole pending string for every streamed chunk.
        self._text: list[str] = []
        self._timer: asyncio.Handle | None = None
        self._urgent = False  # the pending flush is for an urgent operation
        self._last_flush = float("-inf")
        self._last_input = float("-inf")
        self._hold_until = float("-inf")
        self._armed_for = float("-inf")  # when the pending progress timer fires
        self._fresh = False  # text was queued after the pending timer was set

    def render(self, ops: list[RenderOp]) -> None:
        """Queue operations; consecutive appends merge so a batch carries one string."""
        first = ops[0] if len(ops) == 1 else None
        if self._timer is not None and isinstance(first, Append):
            # Streamed text while a batch is due (the hot path, once per chunk): queued and
            # marked; the timer works out from the mark whether the stream went quiet.
            self._text.append(first.text)
            self._fresh = True
            return
        now = self.bridge.loop.time()
        urgent = self._queue(ops, now)
        if not (self._ops or self._text):
            return
        self._last_input, self._fresh = now, False
        if urgent:
            if self._timer is not None and not self._urgent:
                self._timer.cancel()
                self._timer = None
            if self._timer is None:
                self._urgent = True
                self._timer = self.bridge.loop.call_soon(self.flush)
        elif self._timer is None or (not self._urgent and self._due() < self._armed_for):
            if self._timer is not None:  # a hold ended: go sooner than the timer would
                self._timer.cancel()
            self._arm(now)

    def _queue(self, ops: list[RenderOp], now: float) -> bool:
        """Queue `ops` (starting or ending a hold); True when one of them is urgent."""
        urgent = False
        for op in ops:
            if isinstance(op, Append):
                self._text.append(op.text)
                continue
            self._close_text()
            self._ops.append(op.wire())
            urgent = urgent or not (op.paced() or (op.HELD and now < self._hold_until))
            if isinstance(op, Event):
                if op.name in HOLD_FROM:
                    self._hold_until = now + HOLD
                elif op.name == "RequestStreaming":
                    self._hold_until = float("-inf")
        return urgent

    def _due(self) -> float:
        """When queued progress may go: frame or quiet stream, not before MIN_GAP or a hold."""
        soonest = min(self._last_flush + FRAME, self._last_input + QUIET)
        return max(soonest, self._last_flush + MIN_GAP, self._hold_until)

    def _arm(self, now: float) -> None:
        self._urgent = False
        due = self._armed_for = self._due()
        if due > now:
            self._timer = self.bridge.loop.call_later(due - now, self._on_timer)
        else:
            self._timer = self.bridge.loop.call_soon(self._on_timer)

    def _on_timer(self) -> None:
        """Flush, unless input since the timer was set moved the due time (then wait for it)."""
        self._timer = None
        now = self.bridge.loop.time()
        if self._fresh:  # text came since the timer was set: the stream is not quiet yet
            self._fresh, self._last_input = False, now
        if self._due() > now + 0.0002:
            self._arm(now)
        else:
            self.flush()

    def _close_text(self) -> None:
        if self._text:
            self._ops.append(Append(text="".join(self._text)).wire())
            self._text = []

    def flush(self) -> None:
        """Send everything queued now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._close_text()
        if not self._ops:
            return
        ops, self._ops = latest_states(self._ops), []
        self._last_flush = self.bridge.loop.time()
        self.bridge.notify_lua("codecompanion.render", "apply", self.bufnr, ops)

    def notify(self, message: str, level: Level = "info") -> None:
        """One line to the user, in order with the buffer updates."""
        self.render([Notice(text=" ".join(message.split()), level=level)])


def latest_states(ops: list[dict[str, object]]) -> list[dict[str, object]]:
    """`ops` without the states a later op of the same batch replaces: Neovim draws a batch
    once, after its last op, so only the batch's last spinner op and each tool call's last
    status are seen (a tool round queues one of each per call and per status change).

    The kept status carries the newest title the dropped ones set; every other op, events
    included, stays as it is, in its order.
    """
    last: dict[object, int] = {}
    for index, op in enumerate(ops):
        if op["kind"] == "spinner":
            last["spinner"] = index
        elif op["kind"] == "tool_status":
            last[("tool_status", op["call_id"])] = index
    if len(last) == sum(op["kind"] in ("spinner", "tool_status") for op in ops):
        return ops  # nothing replaced
    kept: list[dict[str, object]] = []
    titles: dict[object, object] = {}
    for index, op in enumerate(ops):
        kind = op["kind"]
        key = "spinner" if kind == "spinner" else ("tool_status", op.get("call_id"))
        if kind == "tool_status" and "title" in op:
            titles[key] = op["title"]
        if kind not in ("spinner", "tool_status") or last[key] == index:
            if kind == "tool_status" and key in titles and "title" not in op:
                op = {**op, "title": titles[key]}
            kept.append(op)
    return kept
