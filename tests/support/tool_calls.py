"""Tool specs and calls of every kind (asked, read-only, free) with scripted answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import strategies as st

from codecompanion.messages import ToolCall
from codecompanion.ports import ApprovalDecision

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
