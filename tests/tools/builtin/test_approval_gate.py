"""The one approval gate: an ordered list of named rules, and every question goes through it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codecompanion.tools.builtin._support.paths import resolve_path
from codecompanion.tools.runtime import approval_policy
from codecompanion.tools.runtime.approval_policy import (
    PolicyContext,
    Question,
    QuestionKind,
    Ruling,
    rules_for,
)
from tests.support.builtin import FakeTools
from tests.support.fakes import ScriptedApprover
from tests.support.tools import call, make, simple


def test_the_policy_is_an_ordered_list_of_named_rules() -> None:
    assert rules_for("call") == [
        "deny rules",
        "hook asks",
        "call written as text",
        "leaving the sandbox",
        "allow rules",
        "sandboxed command",
        "edits mode",
        "always (this command)",
        "unreadable command line",
        "hook allows",
        "always (this tool)",
        "yolo",
        "tool needs no approval",
        "approve all pending",
    ]
    assert rules_for("diff_review") == ["edits mode", "yolo", "approved edit"]
    # Questions no rule speaks to are always asked.
    for kind in ("outside_project", "git_control", "redirect", "round_cap", "tool"):
        assert rules_for(kind) == []  # type: ignore[arg-type]


@dataclass
class Recorder:
    """A first rule that sees every question and answers it with `answer`."""

    answer: Ruling | None = None
    seen: list[QuestionKind] = field(default_factory=list)
    name: str = "recorder"
    kinds: frozenset[QuestionKind] = frozenset(
        {"call", "outside_project", "git_control", "redirect", "round_cap", "diff_review", "tool"}
    )

    async def rule(self, question: Question, context: PolicyContext) -> Ruling | None:
        self.seen.append(question.kind)
        return self.answer


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    first = Recorder()
    monkeypatch.setattr(approval_policy, "POLICY", (first, *approval_policy.POLICY))
    return first


async def test_calls_and_the_round_cap_go_through_the_gate(recorder: Recorder) -> None:
    h = make(
        {"t": simple(lambda self, args, input: "ok", requires_approval=True)},
        opts={"max_auto_rounds": 1},
        approver=ScriptedApprover(default="approve", confirms=(False,)),
    )
    await h.run(call("t"))
    outcome = await h.run(call("t"))
    assert recorder.seen == ["call", "call", "round_cap"]
    assert not outcome.auto_submit  # the user said no to going on
    assert len(h.approver.questions) == 1


async def test_a_rule_answers_instead_of_the_user(recorder: Recorder) -> None:
    recorder.answer = Ruling("allow", "test")
    h = make(
        {"t": simple(lambda self, args, input: "ok", requires_approval=True)},
        opts={"max_auto_rounds": 0},
        approver=ScriptedApprover(default="reject"),
    )
    outcome = await h.run(call("t"))
    assert outcome.status == "success" and outcome.auto_submit
    assert h.approver.requests == [] and h.approver.questions == []
    assert await h.system.confirm("A tool's own question?") is True
    recorder.answer = Ruling("deny", "test")
    assert await h.system.confirm("A tool's own question?") is False
    assert recorder.seen[-2:] == ["tool", "tool"]


async def test_file_tools_ask_through_the_gate_with_their_kind(
    tools: FakeTools, project: Path
) -> None:
    (project / ".git").mkdir()
    for raw in ("../x", ".git/config"):
        with pytest.raises(Exception, match="did not allow"):
            await resolve_path(tools, raw, must_exist=False, purpose="creating a file", writes=True)
    assert tools.kinds == ["outside_project", "git_control"]


async def test_the_diff_review_is_decided_by_the_gate(tools: FakeTools, project: Path) -> None:
    from codecompanion.tools.builtin import create_file
    from tests.support.builtin import run_tool
    from tests.support.fakes import FakeEditor

    tools.editor = FakeEditor()
    await run_tool(create_file, {"filepath": "a.txt", "content": "x"}, tools)
    assert len(tools.editor.reviews) == 1  # asked
    tools.yolo = True
    await run_tool(create_file, {"filepath": "b.txt", "content": "x"}, tools)
    assert len(tools.editor.reviews) == 1  # the yolo rule spared it


@dataclass
class ActiveSandbox:
    """Stands in for a working command sandbox (the policy reads only `active`)."""

    active: bool = True


def command_tool() -> dict[str, object]:
    """A tool whose commands the sandbox confines, asking for approval like run_command."""
    return {
        "t": simple(
            lambda self, args, input: "ran",
            requires_approval=True,
            allowed_in_yolo_mode=False,
            sandboxed=True,
        )
    }


@pytest.mark.parametrize(
    ("mode", "sandbox", "asked"),
    [
        ("ask", True, True),
        ("edits", True, True),
        ("sandboxed", True, False),
        ("yolo", True, False),
        ("sandboxed", False, True),  # no sandbox here: the user is asked, as in ask mode
        ("yolo", False, True),  # a tool kept out of YOLO still asks when nothing confines it
    ],
)
async def test_modes_decide_whether_a_command_asks(mode: str, sandbox: bool, asked: bool) -> None:
    h = make(command_tool(), approver=ScriptedApprover(default="approve"))
    h.system.mode = mode  # type: ignore[assignment]
    h.system.sandbox = ActiveSandbox(sandbox)  # type: ignore[assignment]
    outcome = await h.run(call("t"))
    assert outcome.status == "success"
    assert bool(h.approver.requests) is asked


@pytest.mark.parametrize(("mode", "reviewed"), [("ask", 1), ("edits", 0), ("sandboxed", 0)])
async def test_edits_mode_writes_without_a_review(
    tools: FakeTools, mode: str, reviewed: int
) -> None:
    from codecompanion.tools.builtin import create_file
    from tests.support.builtin import run_tool
    from tests.support.fakes import FakeEditor

    tools.editor = FakeEditor()
    tools.mode = mode  # type: ignore[assignment]
    outcome = await run_tool(create_file, {"filepath": "m.txt", "content": "x"}, tools)
    assert outcome.status == "success"
    assert len(tools.editor.reviews) == reviewed


def test_the_mode_survives_a_saved_chat() -> None:
    h = make({})
    h.system.mode = "edits"
    state = h.system.to_state()
    other = make({})
    other.system.restore_state(state)
    assert other.system.mode == "edits"
    other.system.mode = "yolo"
    assert other.system.yolo and other.system.mode == "yolo"
    other.system.yolo = False  # YOLO off (gty) goes back to the mode before it
    assert other.system.mode == "edits"


async def test_a_question_about_commands_says_unconfined_without_a_sandbox() -> None:
    spec = {
        "name": "lister",
        "cmds": [["true"]],
        "schema": {
            "type": "function",
            "function": {"name": "lister", "description": "x", "parameters": {"type": "object"}},
        },
        "opts": {"requires_approval": True},
    }
    h = make({"lister": spec}, approver=ScriptedApprover(default="approve"))
    await h.run(call("lister"))
    assert h.approver.prompts == ["Run the lister tool? (its commands run unconfined: no sandbox)"]
    h.system.sandbox = ActiveSandbox()  # type: ignore[assignment]
    await h.run(call("lister"))
    assert h.approver.prompts[-1] == "Run the lister tool?"
