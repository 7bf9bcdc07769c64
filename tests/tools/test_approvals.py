"""Approvals: every choice, remembered answers, YOLO, rules, prompt_condition and edits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codecompanion.ports import ApprovalDecision
from codecompanion.tools.runtime import shell_rules
from codecompanion.tools.runtime.approvals import rule_verdict
from tests.support.fakes import ScriptedApprover
from tests.support.tools import Harness, calculator, call, make, simple

ARGS = {"num1": 100, "num2": 50, "operation": "multiply"}


def approving(*answers: Any, **opts: Any) -> Harness:
    return make(
        {"calculator": calculator(requires_approval=True, **opts)},
        approver=ScriptedApprover(*answers),
    )


def shell_tool(**opts: Any) -> dict[str, Any]:
    """A stand-in for run_command: echoes the command line it would run."""
    spec = simple(
        lambda self, args, input: f"ran {args['cmd']}",
        "run_command",
        properties={"cmd": {"type": "string"}},
        requires_approval=True,
        allowed_in_yolo_mode=False,
        **opts,
    )
    spec["schema"]["function"]["parameters"]["required"] = ["cmd"]
    return spec


async def test_approve_runs_and_marks_the_call_approved() -> None:
    seen: list[Any] = []
    h = approving("approve")
    h.system.registry.get("calculator").tool.cmds.append(  # type: ignore[union-attr]
        lambda self, args, input: seen.append(self.state["approved"])
    )
    c = call("calculator", ARGS)
    await h.run(c)
    assert h.chat.result(c.id).for_llm.startswith("5000") and seen == [True]
    request = h.approver.requests[0]
    assert request.choices == ("approve", "always", "reject", "cancel", "edit")
    assert json.loads(request.editable_text or "") == ARGS
    assert [s for cid, s, _ in h.chat.statuses if cid == c.id][:2] == [
        "pending",
        "awaiting_approval",
    ]


async def test_reject_with_reason_tells_the_model_and_runs_on_exit() -> None:
    exits: list[str] = []
    h = approving(ApprovalDecision("reject", reason="too big"))
    entry = h.system.registry.get("calculator")
    assert entry is not None
    entry.tool.handlers["on_exit"] = lambda self, tools: exits.append("exit")
    first, second = call("calculator", ARGS), call("calculator", ARGS)
    outcome = await h.run(first, second)
    rejected = h.chat.result(first.id)
    assert rejected.is_error and "rejected" in rejected.for_llm and "too big" in rejected.for_llm
    assert h.chat.final_status(first.id) == "rejected"
    assert h.chat.result(second.id).for_llm == "5000"  # only the rejected call is skipped
    assert exits == ["exit", "exit"] and outcome.status == "error" and outcome.auto_submit


async def test_custom_rejected_output_still_carries_the_reason() -> None:
    h = approving(ApprovalDecision("reject", reason="not now"))
    entry = h.system.registry.get("calculator")
    assert entry is not None
    entry.tool.output["rejected"] = lambda self, tools, cmd: tools.chat.add_tool_output(
        self, "The user declined to run the calculator tool"
    )
    c = call("calculator", ARGS)
    await h.run(c)
    text = h.chat.result(c.id).for_llm
    assert text.startswith("The user declined") and '"not now"' in text


async def test_cancel_answers_this_and_every_queued_call_and_stops_auto_submit() -> None:
    ran: list[int] = []
    h = make(
        {
            "calculator": calculator(requires_approval=True),
            "t": simple(lambda self, args, input: ran.append(1)),
        },
        approver=ScriptedApprover("approve", "cancel"),
    )
    calls = [call("calculator", ARGS), call("calculator", ARGS), call("t"), call("nope")]
    outcome = await h.run(*calls)
    assert [h.chat.final_status(c.id) for c in calls] == [
        "success",
        "cancelled",
        "cancelled",
        "cancelled",
    ]
    assert ran == [] and outcome.status == "cancelled" and not outcome.auto_submit
    assert "cancelled" in h.chat.result(calls[2].id).for_llm


async def test_always_is_remembered_for_the_chat() -> None:
    h = approving("always")
    await h.run(call("calculator", ARGS))
    await h.run(call("calculator", ARGS))
    assert len(h.approver.requests) == 1
    assert h.system.to_state()["approvals"] == {"tools": ["calculator"], "commands": []}


async def test_always_for_a_tool_not_allowed_in_yolo_covers_only_that_command() -> None:
    h = make({"run_command": shell_tool()}, approver=ScriptedApprover("always", "approve"))
    await h.run(call("run_command", {"cmd": "ls"}))
    await h.run(call("run_command", {"cmd": "ls"}))
    await h.run(call("run_command", {"cmd": "rm -rf build"}))
    assert [r.editable_text for r in h.approver.requests] == ["ls", "rm -rf build"]


async def test_approve_all_is_offered_with_several_calls_and_covers_the_batch() -> None:
    h = approving("approve_all")
    calls = [call("calculator", ARGS) for _ in range(3)]
    await h.run(*calls)
    assert len(h.approver.requests) == 1
    assert "approve_all" in h.approver.requests[0].choices
    assert all(h.chat.final_status(c.id) == "success" for c in calls)
    await h.run(call("calculator", ARGS))  # a new batch asks again
    assert len(h.approver.requests) == 2


async def test_approve_all_does_not_cover_tools_excluded_from_yolo() -> None:
    h = make(
        {"calculator": calculator(requires_approval=True), "run_command": shell_tool()},
        approver=ScriptedApprover("approve_all", "approve"),
    )
    await h.run(
        call("calculator", ARGS), call("calculator", ARGS), call("run_command", {"cmd": "ls"})
    )
    assert [r.tool_name for r in h.approver.requests] == ["calculator", "run_command"]


async def test_edit_json_arguments_runs_the_edited_call_and_tells_the_model() -> None:
    edited = json.dumps({"num1": 6, "num2": 7, "operation": "multiply"})
    h = approving(ApprovalDecision("edit", edited=edited))
    c = call("calculator", ARGS)
    await h.run(c)
    text = h.chat.result(c.id).for_llm
    assert text.startswith("Note: the user edited the arguments") and text.endswith("42")


async def test_an_invalid_edit_is_an_error_result() -> None:
    h = approving(ApprovalDecision("edit", edited='{"num1": "six"}'))
    c = call("calculator", ARGS)
    await h.run(c)
    result = h.chat.result(c.id)
    assert result.is_error and "edit is invalid" in result.for_llm


async def test_edit_of_a_command_line_replaces_cmd_and_reruns_setup() -> None:
    setups: list[str] = []
    spec = shell_tool()
    spec["handlers"] = {"setup": lambda self, tools: setups.append(self.args["cmd"])}
    h = make(
        {"run_command": spec}, approver=ScriptedApprover(ApprovalDecision("edit", edited="ls -la "))
    )
    c = call("run_command", {"cmd": "ls"})
    await h.run(c)
    assert h.approver.requests[0].editable_text == "ls"
    assert h.chat.result(c.id).for_llm.endswith("ran ls -la") and setups == ["ls", "ls -la"]


async def test_prompt_condition_decides_whether_to_ask() -> None:
    spec = calculator(requires_approval={"small": False})
    spec["handlers"]["prompt_condition"] = lambda self, tools: self.args["num1"] > 10
    h = make({"calculator": spec})
    await h.run(call("calculator", {**ARGS, "num1": 1}), call("calculator", ARGS))
    assert [r.arguments["num1"] for r in h.approver.requests] == [100]


async def test_requires_approval_may_be_a_function_and_the_old_name_works() -> None:
    h = make(
        {
            "calculator": calculator(
                require_approval_before=lambda tool, tools: tool.args["num1"] > 10
            )
        }
    )
    await h.run(call("calculator", {**ARGS, "num1": 1}), call("calculator", ARGS))
    assert len(h.approver.requests) == 1


async def test_yolo_skips_asking_except_for_tools_not_allowed_in_yolo() -> None:
    h = make(
        {"calculator": calculator(requires_approval=True), "run_command": shell_tool()}, yolo=True
    )
    a, b = call("calculator", ARGS), call("run_command", {"cmd": "make"})
    await h.run(a, b)
    assert [r.tool_name for r in h.approver.requests] == ["run_command"]
    assert h.chat.final_status(a.id) == h.chat.final_status(b.id) == "success"


async def test_yolo_marks_calls_approved_even_without_approval_needed() -> None:
    seen: list[Any] = []
    h = make(
        {"t": simple(lambda self, args, input: seen.append(self.state["approved"]))}, yolo=True
    )
    await h.run(call("t"))
    h.system.yolo = False
    await h.run(call("t"))
    assert seen == [True, False]


async def test_allow_and_deny_rules() -> None:
    h = make(
        {"run_command": shell_tool()},
        tool_opts={"run_command": {"allow": ["git status", "ls*"], "deny": ["rm *"]}},
        approver=ScriptedApprover(default="approve"),
    )
    allowed, denied, asked = (
        call("run_command", {"cmd": "ls -la"}),
        call("run_command", {"cmd": "rm -rf /"}),
        call("run_command", {"cmd": "make"}),
    )
    await h.run(allowed, denied, asked)
    assert [r.editable_text for r in h.approver.requests] == ["make"]
    assert h.chat.final_status(allowed.id) == "success"
    result = h.chat.result(denied.id)
    assert result.is_error and "denied by rule" in result.for_llm
    assert h.chat.statuses[-1] == (asked.id, "success", "")
    assert (denied.id, "error", "denied by rule") in h.chat.statuses


async def test_deny_holds_in_yolo_and_against_edits() -> None:
    h = make(
        {
            "calculator": calculator(requires_approval=True, deny=['*"operation": "divide"*']),
            "run_command": shell_tool(deny=["rm *"]),
        },
        yolo=True,
        approver=ScriptedApprover(ApprovalDecision("edit", edited="rm -rf /")),
    )
    divide, edited = (
        call("calculator", {**ARGS, "operation": "divide"}),
        call("run_command", {"cmd": "ls"}),
    )
    await h.run(divide, edited)
    assert "denied by rule" in h.chat.result(divide.id).for_llm
    assert "denied by rule" in h.chat.result(edited.id).for_llm


@pytest.mark.parametrize(
    ("key", "verdict"),
    [
        ("ls -la", "allow"),
        ("git status", "allow"),
        ("ls && rm -rf /", "deny"),
        ("echo $(rm -rf /)", "deny"),
        ("ls; git status", "allow"),
        ("ls > ~/.bashrc", None),
        ("ls `whoami`", None),
        ("ls; make", None),
        ("make", None),
    ],
)
def test_rules_check_every_piece_of_a_shell_line(key: str, verdict: str | None) -> None:
    opts = {"allow": ["ls*", "git status"], "deny": ["rm *"]}
    assert rule_verdict(opts, key, shell=True) == verdict


async def test_a_failing_approver_rejects_rather_than_runs() -> None:
    class Broken(ScriptedApprover):
        async def ask(self, request: Any) -> ApprovalDecision:
            raise RuntimeError("ui gone")

    ran: list[int] = []
    h = make(
        {"t": simple(lambda self, args, input: ran.append(1), requires_approval=True)},
        approver=Broken(),
    )
    c = call("t")
    await h.run(c)
    assert ran == [] and h.chat.final_status(c.id) == "rejected"
    assert "ui gone" in h.chat.result(c.id).for_llm


async def test_approval_events_carry_the_choice() -> None:
    h = approving("approve")
    await h.run(call("calculator", ARGS))
    assert h.events.of("ToolApprovalFinished")[0]["choice"] == "approve"
    assert h.events.of("ToolApprovalRequested")[0]["name"] == "calculator"


async def test_a_custom_approval_key_is_worked_out_once_per_call() -> None:
    # Every rule reads the same key: a tool's approval_key function runs once per decision,
    # whichever rules look at it (deny, allow, remembered, ...), and the key still decides.
    keys: list[dict[str, Any]] = []

    def key(args: dict[str, Any]) -> str:
        keys.append(args)
        return f"calc {args['operation']}"

    h = approving("approve", approval_key=key, deny=["calc divide"])
    allowed, denied = call("calculator", ARGS), call("calculator", {**ARGS, "operation": "divide"})
    await h.run(allowed, denied)
    assert h.chat.result(allowed.id).for_llm == "5000"
    assert "denied by rule" in h.chat.result(denied.id).for_llm
    assert keys == [ARGS, {**ARGS, "operation": "divide"}]


async def test_a_command_line_is_read_once_whichever_rules_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deny rules, the allow rules and the question all read the line of one call: the
    # shell reader parses it once, and the rules still decide as before.
    parsed: list[str] = []
    parse = shell_rules.parse

    def counted(line: str) -> Any:
        parsed.append(line)
        return parse(line)

    monkeypatch.setattr(shell_rules, "parse", counted)
    getattr(shell_rules.read, "cache_clear", lambda: None)()  # lines read by other tests
    h = make(
        {"run_command": shell_tool()},
        tool_opts={"run_command": {"allow": ["sleep 2"], "deny": ["rm *"]}},
        approver=ScriptedApprover(default="approve"),
    )
    allowed, denied = (
        call("run_command", {"cmd": "sleep 2"}),
        call("run_command", {"cmd": "rm -f x"}),
    )
    await h.run(allowed, denied)
    assert h.chat.final_status(allowed.id) == "success" and h.approver.requests == []
    assert "denied by rule" in h.chat.result(denied.id).for_llm
    assert parsed == ["sleep 2", "rm -f x"]
