"""The rule every batch keeps: each call id gets exactly one result, whatever happens.

`Answers` is the only place a result reaches the chat. The first result of a call is delivered,
a second is refused (and logged), and `answer_rest` gives every call still without one its
result when the batch ends for any reason. tests/tools/test_invariant.py checks the rule on
random batches; tests/tools/test_answers.py checks this object directly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...messages import ToolCall
from .results import CallResult, Status

log = logging.getLogger("codecompanion.tools")


class Answers:
    """The results of one batch's calls: one per call id, delivered once."""

    def __init__(
        self, calls: list[ToolCall], deliver: Callable[[ToolCall, CallResult], None]
    ) -> None:
        self._calls = list(calls)
        self._deliver = deliver
        self.statuses: dict[str, Status] = {}

    def has(self, call_id: str) -> bool:
        """True once the call has its result."""
        return call_id in self.statuses

    def record(self, call: ToolCall, result: CallResult) -> bool:
        """Deliver the call's result; False (nothing delivered) if it already has one."""
        if call.id in self.statuses:
            log.warning("call %s already has its result; a second one was dropped", call.id)
            return False
        self.statuses[call.id] = result.status
        self._deliver(call, result)
        return True

    def answer_rest(self, result_for: Callable[[ToolCall], CallResult]) -> None:
        """Give each call still without one `result_for(call)`; synchronous, so safe in a cancel."""
        for call in self._calls:
            if call.id not in self.statuses:
                self.record(call, result_for(call))
