"""A turn's guard against a model going round in circles.

Small models often repeat a call whose result they already have, or keep sending calls that
cannot be read. Within one user turn: the same call (name and arguments) a third time is not
run, the model is told why and the user sees it; a fourth time ends the turn. A round of calls
that cannot be read gets the parser's error once (the tool system answers it); a second such
round in the turn ends it, since the model has shown it cannot correct itself.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..messages import ToolCall, ToolResult

REPEAT_LIMIT = 3  # the same call this many times in a turn: not run again


def repeated_result(name: str, times: int) -> ToolResult:
    """The result a repeated call gets instead of running again."""
    return ToolResult(
        "error",
        f"Not run: this is the {_nth(times)} identical call to {name} in this turn, and its "
        "result would be the same as before. Use the result you already have, or do "
        "something different; if the task is done, answer the user.",
        for_user=f"not run: the {_nth(times)} identical call",
        detail=f"the {_nth(times)} identical call",
    )


def stopped_result() -> ToolResult:
    """The result every call of a round gets when the guard ends the turn."""
    return ToolResult("cancelled", "Not run: the turn was stopped.", detail="turn stopped")


def _nth(times: int) -> str:
    return {3: "third", 4: "fourth"}.get(times, f"{times}th")


@dataclass(frozen=True)
class Review:
    """What the guard decided about one round of calls."""

    run: list[ToolCall]  # the calls to run
    refused: list[tuple[ToolCall, ToolResult]]  # calls answered without running
    stop: str | None = None  # the one line the user gets when the turn ends here


@dataclass
class CallGuard:
    """Counts one turn's calls; `review` decides each round."""

    seen: Counter[str] = field(default_factory=Counter)
    malformed_rounds: int = 0

    def reset(self) -> None:
        """A new user turn: nothing counted yet."""
        self.seen.clear()
        self.malformed_rounds = 0

    def review(self, calls: Sequence[ToolCall], malformed: Callable[[ToolCall], bool]) -> Review:
        """The calls to run, those answered without running, and whether the turn ends."""
        if any(malformed(call) for call in calls):
            self.malformed_rounds += 1
            if self.malformed_rounds > 1:
                stop = "the model's tool calls could not be read again after their error: stopped"
                return Review([], [(c, stopped_result()) for c in calls], stop)
        run: list[ToolCall] = []
        refused: list[tuple[ToolCall, ToolResult]] = []
        for call in calls:
            key = _key(call)
            self.seen[key] += 1
            times = self.seen[key]
            if times > REPEAT_LIMIT:
                stop = f"the model made the same {call.name} call {times} times: stopped"
                return Review([], [(c, stopped_result()) for c in calls], stop)
            if times == REPEAT_LIMIT:
                refused.append((call, repeated_result(call.name, times)))
            else:
                run.append(call)
        return Review(run, refused)


def _key(call: ToolCall) -> str:
    arguments = call.raw_arguments if call.raw_arguments is not None else call.arguments
    return json.dumps([call.name, arguments], sort_keys=True, default=str)
