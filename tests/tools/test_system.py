"""The per-chat tool system: offering tools, prompts, state, auto-submit, cancel, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.fakes import WAIT, ScriptedApprover
from tests.support.tools import calculator, call, make, simple

GROUPS = {
    "maths": {
        "description": "numbers",
        "tools": ["calculator", "t"],
        "prompt": "I'm giving you ${tools} for sums",
        "system_prompt": "Use the maths tools carefully.",
    },
    "quiet": {"tools": ["t", "missing"]},
}


def tools_and_groups(**kwargs: Any) -> Any:
    return make(
        {
            "calculator": calculator(),
            "t": simple(lambda self, args, input: "t ran"),
            "a.b": simple(lambda self, args, input: "dotted", "a.b"),
        },
        offer=False,
        groups=GROUPS,
        **kwargs,
    )


def test_parse_user_message_offers_mentions_and_rewrites_them() -> None:
    h = tools_and_groups()
    text = (
        "Use @{calculator} for 100*50.\n\n\nThen @{quiet} and @{unknown} and @{a.b} (not @{aXb})."
    )
    rewritten = h.system.parse_user_message(text)
    assert rewritten == (
        "Use the calculator tool for 100*50.\n\n\nThen the t tools and @{unknown} and "
        "the a.b tool (not @{aXb})."
    )
    assert h.system.offered == ["calculator", "t", "a.b"]
    assert h.system.groups == ["quiet"]


def test_group_prompt_and_system_prompts_come_once_each() -> None:
    h = tools_and_groups()
    assert (
        h.system.parse_user_message("@{maths}") == "I'm giving you the calculator, t tools for sums"
    )
    h.system.parse_user_message("@{calculator} again, @{maths}")
    assert h.system.system_prompts() == [
        (
            "<tool>calculator</tool>",
            "## Calculator Tool (`calculator`)\n\nDo maths on two numbers.",
        ),
        ("<group>maths</group>", "Use the maths tools carefully."),
    ]


def test_schemas_follow_the_order_tools_were_added() -> None:
    h = tools_and_groups()
    h.system.add_tool("t")
    h.system.add_tool("calculator")
    h.system.add_tool("t")
    assert [s["function"]["name"] for s in h.system.schemas()] == ["t", "calculator"]
    assert h.system.add_tool("nope") is False and h.system.add_group("nope") is False


def test_state_round_trip() -> None:
    h = tools_and_groups()
    h.system.parse_user_message("@{maths}")
    h.system.yolo = True
    h.system.approvals.remember("calculator", "{}", per_command=False)
    state = h.system.to_state()
    other = tools_and_groups()
    other.system.restore_state({**state, "tools": [*state["tools"], "gone"]})
    assert other.system.to_state() == state


async def test_auto_rounds_are_capped_and_then_the_user_is_asked() -> None:
    h = make(
        {"t": simple(lambda self, args, input: "ok")},
        opts={"max_auto_rounds": 2},
        approver=ScriptedApprover(confirms=(True, False)),
    )
    decisions = [(await h.run(call("t"))).auto_submit for _ in range(5)]
    assert decisions == [True, True, True, True, False]
    assert len(h.approver.questions) == 2
    h.system.reset_rounds()
    assert (await h.run(call("t"))).auto_submit


async def test_auto_submit_can_be_turned_off() -> None:
    h = make({"t": simple(lambda self, args, input: "ok")}, opts={"auto_submit": False})
    outcome = await h.run(call("t"))
    assert outcome.status == "success" and not outcome.auto_submit


async def test_cancel_while_an_approval_is_pending_answers_every_call() -> None:
    h = make(
        {"calculator": calculator(requires_approval=True)},
        approver=ScriptedApprover(WAIT),
    )
    calls = [call("calculator", {"num1": 1, "num2": 2, "operation": "add"}) for _ in range(3)]
    batch = asyncio.ensure_future(h.run(*calls))
    await h.approver.asked.wait()
    h.system.cancel()
    outcome = await batch
    assert outcome.status == "cancelled" and not outcome.auto_submit
    assert [h.chat.final_status(c.id) for c in calls] == ["cancelled"] * 3
    assert len(h.chat.results) == 3 and h.events.names()[-1] == "ToolsFinished"


async def test_cancel_of_a_running_function_tool_runs_its_cancelled_output() -> None:
    started = asyncio.Event()

    async def forever(self: Any, args: dict[str, Any], input: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    spec = simple(forever)
    spec["output"] = {
        "cancelled": lambda self, tools, cmd: tools.chat.add_tool_output(self, "stopped by user")
    }
    h = make({"t": spec})
    c = call("t")
    batch = asyncio.ensure_future(h.run(c))
    await started.wait()
    h.system.cancel()
    await batch
    assert h.chat.result(c.id).for_llm == "stopped by user"


async def test_cancelling_the_task_running_the_batch_still_answers_every_call() -> None:
    started = asyncio.Event()

    async def forever(self: Any, args: dict[str, Any], input: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    h = make({"t": simple(forever)})
    calls = [call("t"), call("t")]
    batch = asyncio.ensure_future(h.run(*calls))
    await started.wait()
    batch.cancel()
    try:
        await batch
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the batch should re-raise CancelledError")
    assert [h.chat.final_status(c.id) for c in calls] == ["cancelled", "cancelled"]


async def test_consecutive_read_only_calls_run_concurrently() -> None:
    # Each waits for the other: run one after the other, they would both time out.
    events = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def meet(self: Any, args: dict[str, Any], input: Any) -> str:
        events[args["me"]].set()
        await events[args["other"]].wait()
        return f"{args['me']} met {args['other']}"

    props = {"me": {"type": "string"}, "other": {"type": "string"}}
    h = make({"look": simple(meet, "look", props, read_only=True, timeout=5000)})
    a, b = call("look", {"me": "a", "other": "b"}), call("look", {"me": "b", "other": "a"})
    outcome = await h.run(a, b)
    assert outcome.status == "success"
    assert [r.call.id for r in h.chat.results] == [a.id, b.id]  # recorded in call order
    assert h.chat.result(b.id).for_llm == "b met a"


async def test_read_only_calls_are_still_approved_one_at_a_time_in_order() -> None:
    h = make(
        {
            "look": simple(
                lambda self, args, input: "ok", "look", read_only=True, requires_approval=True
            )
        },
        approver=ScriptedApprover("approve", "reject"),
    )
    a, b = call("look"), call("look")
    await h.run(a, b)
    assert [r.call_id for r in h.approver.requests] == [a.id, b.id]
    assert (h.chat.final_status(a.id), h.chat.final_status(b.id)) == ("success", "rejected")


@pytest.mark.parametrize("stop", ["batch cancelled", "user chose cancel"])
async def test_a_stop_during_read_only_approvals_answers_each_call_once_cancelled(
    stop: str,
) -> None:
    # The second of three read-only calls is being asked about: the first (approved, not run
    # yet), the second and the third are each answered cancelled, once, and nothing runs.
    ran: list[str] = []
    look = simple(
        lambda self, args, input: ran.append("ran"), "look", read_only=True, requires_approval=True
    )
    second = "cancel" if stop == "user chose cancel" else WAIT
    h = make({"look": look}, approver=ScriptedApprover("approve", second))
    calls = [call("look"), call("look"), call("look")]
    batch = asyncio.ensure_future(h.run(*calls))
    if stop == "batch cancelled":
        while len(h.approver.requests) < 2:
            await asyncio.sleep(0)
        h.system.cancel()
    outcome = await batch
    assert outcome.status == "cancelled" and ran == []
    assert [h.chat.final_status(c.id) for c in calls] == ["cancelled"] * 3
    assert sorted(r.call.id for r in h.chat.results) == sorted(c.id for c in calls)
    assert [r.call_id for r in h.approver.requests] == [calls[0].id, calls[1].id]


async def test_an_empty_batch_does_nothing() -> None:
    h = make({"t": simple(lambda self, args, input: "ok")})
    outcome = await h.run()
    assert (outcome.status, outcome.auto_submit, outcome.results) == ("success", False, 0)
    assert h.events.names() == ["ChatToolAdded"]


async def test_a_failing_chat_view_does_not_break_the_batch() -> None:
    h = make({"t": simple(lambda self, args, input: "ok")})

    def broken(call: Any, status: str, detail: str = "") -> None:
        raise RuntimeError("view closed")

    h.chat.tool_status = broken  # type: ignore[method-assign]
    c = call("t")
    outcome = await h.run(c)
    assert outcome.status == "success" and h.chat.result(c.id).for_llm == "ok"


def test_default_tools_are_offered_at_start() -> None:
    h = tools_and_groups(opts={"default_tools": ["maths", "a.b"]})
    assert h.system.offered == ["calculator", "t", "a.b"] and h.system.groups == ["maths"]
