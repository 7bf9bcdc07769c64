"""The invariant on random batches: every call id gets exactly one result, whatever happens.

The rule lives in `codecompanion.tools.runtime.runner.Answers`; tests/tools/test_answers.py
checks that object directly, this test checks the whole tool system keeps it.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.messages import ToolCall
from codecompanion.ports import ApprovalDecision
from codecompanion.tools.runtime.protocol import FINAL_STATUSES
from tests.support.fakes import ScriptedApprover
from tests.support.tools import make

MODES = ["ok", "error", "raise", "hang", "twice", "never", "cancel_self"]
ANSWERS = ["approve", "always", "approve_all", "reject", "cancel", "edit", "edit_bad"]
PROPS = {"n": {"type": "integer"}, "mode": {"type": "string", "enum": MODES}}


async def behave(self: Any, args: dict[str, Any], input: Any, output_handler: Any) -> Any:
    mode = args["mode"]
    if mode == "ok":
        return {"status": "success", "data": args["n"]}
    if mode == "error":
        return {"status": "error", "data": "failed on purpose"}
    if mode == "raise":
        raise RuntimeError("crash")
    if mode == "twice":
        output_handler({"status": "success", "data": 1})
        output_handler({"status": "success", "data": 2})
        return None
    if mode == "cancel_self":
        self.tools.cancel()
    if mode in ("hang", "cancel_self"):
        await asyncio.Event().wait()
    return None  # "never": output_handler is never called


def spec(name: str, **opts: Any) -> dict[str, Any]:
    return {
        "name": name,
        "cmds": [behave],
        "schema": {
            "type": "function",
            "function": {
                "name": name,
                "description": name,
                "parameters": {
                    "type": "object",
                    "properties": PROPS,
                    "required": ["n", "mode"],
                    "additionalProperties": False,
                },
            },
        },
        "opts": {"timeout": 20, **opts},
    }


def answer(choice: str) -> ApprovalDecision:
    if choice == "edit":
        return ApprovalDecision("edit", edited=json.dumps({"n": 7, "mode": "ok"}))
    if choice == "edit_bad":
        return ApprovalDecision("edit", edited='{"n": "seven"}')
    return ApprovalDecision(choice, reason="no" if choice == "reject" else None)  # type: ignore[arg-type]


call_kinds = st.one_of(
    st.tuples(st.just("asked"), st.sampled_from(MODES), st.sampled_from(ANSWERS)),
    st.tuples(st.just("read_only"), st.sampled_from(MODES), st.just("")),
    st.tuples(st.just("free"), st.sampled_from(MODES), st.just("")),
    st.tuples(
        st.sampled_from(["unknown", "bad_json", "repairable", "schema"]), st.just(""), st.just("")
    ),
)


def build(kinds: list[tuple[str, str, str]]) -> tuple[list[ToolCall], dict[str, ApprovalDecision]]:
    calls: list[ToolCall] = []
    answers: dict[str, ApprovalDecision] = {}
    for index, (kind, mode, choice) in enumerate(kinds):
        call_id = f"c{index}"
        args = {"n": index, "mode": mode}
        if kind == "asked":
            calls.append(ToolCall(call_id, "asked", args))
            answers[call_id] = answer(choice)
        elif kind in ("read_only", "free"):
            calls.append(ToolCall(call_id, kind, args))
        elif kind == "unknown":
            calls.append(ToolCall(call_id, "no_such_tool", args))
        elif kind == "bad_json":
            calls.append(ToolCall(call_id, "free", {}, "[[["))
        elif kind == "repairable":
            calls.append(ToolCall(call_id, "free", {}, "{'n': 1, 'mode': 'ok'"))
        else:
            calls.append(ToolCall(call_id, "free", {"n": "one", "mode": "ok"}))
    return calls, answers


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
    assert not h.system.buffers and not h.system.running


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(call_kinds, min_size=1, max_size=6), yolo=st.booleans())
def test_every_call_gets_exactly_one_result(kinds: list[tuple[str, str, str]], yolo: bool) -> None:
    asyncio.run(run_batch(kinds, yolo))
