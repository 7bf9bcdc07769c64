"""The invariant on random batches: every call id gets exactly one result, whatever happens.

The rule lives in `codecompanion.tools.runtime.protocol.BatchResults`; tests/tools/test_answers.py
checks that object directly, this test checks the whole tool system keeps it.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.tools.runtime.protocol import FINAL_STATUSES
from tests.support.fakes import ScriptedApprover
from tests.support.tool_calls import build, call_kinds, spec
from tests.support.tools import make


async def run_batch(kinds: list[tuple[str, str, str]], yolo: bool) -> None:
    calls, answers = build(kinds)
    h = make(
        {
            "asked": spec("asked", requires_approval=True),
            "read_only": spec("read_only", read_only=True),
            "free": spec("free"),
        },
        approver=ScriptedApprover(by_call=answers),
        yolo=yolo,
    )
    outcome = await h.run(*calls)
    counts = Counter(result.call.id for result in h.chat.results)
    assert counts == Counter(c.id for c in calls), counts
    for c in calls:
        status = h.chat.final_status(c.id)
        assert status in FINAL_STATUSES and outcome.statuses[c.id] == status
        assert h.chat.result(c.id).is_error == (status != "success")
        assert h.chat.result(c.id).for_llm.strip()
    assert h.events.names().count("ToolsFinished") == 1
    assert len(h.events.of("ToolFinished")) == len(calls)
    if outcome.status == "cancelled":
        assert not outcome.auto_submit
        first = next(i for i, c in enumerate(calls) if outcome.statuses[c.id] == "cancelled")
        assert all(outcome.statuses[c.id] == "cancelled" for c in calls[first:])
    assert not h.system.running


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(call_kinds, min_size=1, max_size=6), yolo=st.booleans())
def test_every_call_gets_exactly_one_result(kinds: list[tuple[str, str, str]], yolo: bool) -> None:
    asyncio.run(run_batch(kinds, yolo))
