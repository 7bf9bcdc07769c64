"""Whether a response body that ended without a transport error was a whole answer.

A body can end cleanly and still be unusable: cut off in the middle of a tool call (by a proxy,
or at the model's output limit), or not an answer at all (an HTML error page with status 200).
Running a cut-off call would act on half its arguments (half a file written), so such an answer
is reported as interrupted, and its calls are dropped like those of a dropped connection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..adapters.base import Event, Finish, ReasoningDelta, TextDelta, ToolCallEvent
from ..adapters.http_errors import one_line
from ..errors import AdapterError, ProviderError, StreamInterrupted
from ..messages import ToolCall

_HEAD = 200  # bytes of the body kept to quote an unreadable one


@dataclass
class BodyWatch:
    """What one response body delivered, as far as completeness is concerned."""

    head: bytearray = field(default_factory=bytearray)
    content: bool = False
    finish: str | None = None

    def body(self, chunk: bytes) -> None:
        """Keep the first bytes of the body."""
        if len(self.head) < _HEAD:
            self.head += chunk[: _HEAD - len(self.head)]

    def event(self, event: Event) -> None:
        """Note text, reasoning, calls and the finish reason."""
        if isinstance(event, (TextDelta, ReasoningDelta, ToolCallEvent)):
            self.content = True
        elif isinstance(event, Finish):
            self.finish = event.reason

    def problem(
        self,
        label: str,
        calls: list[ToolCall],
        ended: bool,
        cut_calls: bool,
        redact: Callable[[str], str] = str,
        skipped: Sequence[str] = (),
        reason: str | None = "stop",
    ) -> AdapterError | None:
        """The error for an incomplete answer, or None for a whole one.

        `ended`: the provider's end marker (finish reason, `[DONE]`, `message_stop`...) arrived
        before the body ended. `cut_calls`: tool calls were still open when the body ended.
        `redact` removes secrets from the quoted body. `skipped`: stream data the parser could
        not read; `reason`: the finish reason the provider itself sent (None: none came).
        """
        if cut_calls:
            return StreamInterrupted(
                f"{label}: the answer ended in the middle of a tool call; the tool call was "
                "cut off and did not run"
            )
        if self.finish == "length" and any(call.raw_arguments is not None for call in calls):
            return StreamInterrupted(
                f"{label} reached its output limit in the middle of a tool call; the tool call "
                "was cut off and did not run (raise max_tokens, or ask for smaller steps)"
            )
        if self.content:
            return None
        if skipped:  # everything the stream carried was unreadable (malformed JSON...)
            quote = redact(one_line(skipped[0], 80))
            return ProviderError(f"{label} sent a stream with no readable event: {quote}")
        if ended and reason is None and self.head.strip():
            # An end marker ([DONE]) after objects none of which said anything or why it ended.
            return ProviderError(
                f"{label} sent a stream with no readable event: {redact(self.quote())}"
            )
        if ended:
            return None
        if not self.head.strip():
            return ProviderError(f"{label} sent an empty response")
        quote = redact(self.quote())
        return ProviderError(f"{label} sent a response that could not be read: {quote}")

    def quote(self) -> str:
        """The start of the body on one line."""
        return one_line(self.head.decode("utf-8", errors="replace"), 80)
