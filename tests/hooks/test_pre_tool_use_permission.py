"""PreToolUse hooks that ask, allow or change a call, through the orchestrator: "ask" is asked
whatever the rules or YOLO say, the user's "allow" spares only the questions that may be
spared, and `updatedInput` runs (checked like the model's arguments) and is shown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codecompanion.hooks import ChatHooks, HookTable, read_table
from codecompanion.hooks.run import Where
from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.hook_scripts import SWAP, hook_command
from tests.support.tools import builtin_system, call, make, simple


@dataclass
class ActiveSandbox:
    """Stands in for a working command sandbox (the policy reads only `active`)."""

    active: bool = True


def _pre(decision: str | None, reason: str = "", **more: Any) -> dict[str, Any]:
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", **more}
    if decision is not None:
        specific["permissionDecision"] = decision
    if reason:
        specific["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": specific}


def _says(answer: dict[str, Any]) -> Any:
    return lambda event: answer


def _hook(system: ToolSystem, root: Path, table: HookTable) -> list[str]:
    lines: list[str] = []
    system.hooks = ChatHooks(table, lambda: Where(root, system.environment()), "chat-1")
    system.hooks.say = lines.append
    return lines


def _hooked(
    root: Path, hooks: dict[str, Any], approver: ScriptedApprover, **settings: Any
) -> tuple[ToolSystem, RecordingChat, list[str]]:
    system, chat = builtin_system(root, "agent", approver=approver, **settings)
    return system, chat, _hook(system, root, read_table({"PreToolUse": hooks}, "hooks"))


async def test_a_hook_that_asks_is_asked_over_allow_rules_and_hooks(tmp_path: Path) -> None:
    asks = {"matcher": "Bash", "hooks": [_says(_pre("ask", "check the target first"))]}
    allows = {"matcher": "Bash", "hooks": [_says(_pre("allow"))]}
    approver = ScriptedApprover(default="reject")
    rules = {"run_command": {"allow": ["echo *"]}}
    system, chat, _ = _hooked(tmp_path, [allows, asks], approver, yolo=True, tool_opts=rules)
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo hi"})])
    assert approver.prompts == [
        "A hook asks (check the target first): Run the command `echo hi`? (unconfined)"
    ]
    assert chat.final_status("c1") == "rejected"
    # Without the hook the same call runs unasked (the allow rule).
    system.hooks = None
    await system.run([ToolCall("c2", "run_command", {"cmd": "echo hi"})])
    assert chat.final_status("c2") == "success" and len(approver.requests) == 1


async def test_the_users_allow_spares_the_question_but_not_what_must_be_asked(
    tmp_path: Path,
) -> None:
    approver = ScriptedApprover(default="reject")
    hook = {"hooks": [_says(_pre("allow"))]}
    system, chat, _ = _hooked(tmp_path / "p", [hook], approver)
    (tmp_path / "p").mkdir()
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo spared"})])
    assert chat.final_status("c1") == "success" and approver.requests == []
    args = {"filepath": "new.txt", "content": "x"}
    await system.run([ToolCall("c2", "create_file", args)])
    assert (tmp_path / "p/new.txt").read_text() == "x" and approver.requests == []
    # A line the rules cannot read is asked, naming why.
    await system.run([ToolCall("c3", "run_command", {"cmd": "echo $(date)"})])
    assert "asked because the rules cannot tell what it runs" in approver.prompts[-1]
    # A path outside the project is its own question, still asked (and refused here).
    outside = {"filepath": "../outside.txt", "content": "x"}
    await system.run([ToolCall("c4", "create_file", outside)])
    assert approver.questions and not (tmp_path / "outside.txt").exists()
    # Leaving the sandbox is asked.
    system.sandbox = ActiveSandbox()  # type: ignore[assignment]
    await system.run([ToolCall("c5", "run_command", {"cmd": "echo x", "unconfined": True})])
    assert "OUTSIDE the sandbox" in approver.prompts[-1]
    assert [chat.final_status(c) for c in ("c3", "c4", "c5")] == ["rejected", "error", "rejected"]


async def test_a_hook_of_the_projects_settings_cannot_spare_a_question(tmp_path: Path) -> None:
    script = f"import json; print(json.dumps({_pre('allow')!r}))"
    command = hook_command(tmp_path / "hooks", "allow", script)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    table = read_table({"PreToolUse": [entry]}, ".claude/settings.json", functions=False)
    approver = ScriptedApprover(default="approve")
    system, chat = builtin_system(tmp_path, "agent", approver=approver)
    _hook(system, tmp_path, table)
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo asked"})])
    assert approver.prompts == ["Run the command `echo asked`? (unconfined)"]
    assert chat.final_status("c1") == "success"


async def test_arguments_a_project_settings_hook_changed_are_asked_about(tmp_path: Path) -> None:
    command = hook_command(tmp_path / "hooks", "swap", SWAP)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    table = read_table({"PreToolUse": [entry]}, ".claude/settings.json", functions=False)
    approver = ScriptedApprover(default="reject")
    rules = {"run_command": {"allow": ["echo *"]}}
    system, chat = builtin_system(tmp_path, "agent", approver=approver, tool_opts=rules)
    _hook(system, tmp_path, table)
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo one"})])
    assert approver.prompts == [
        "A hook asks (a hook of the project's settings changed the arguments): "
        "Run the command `echo two`? (unconfined)"
    ]
    await system.run([ToolCall("c2", "run_command", {"cmd": "echo same"})])  # unchanged
    assert len(approver.requests) == 1
    assert [chat.final_status(c) for c in ("c1", "c2")] == ["rejected", "success"]


async def test_updated_input_runs_and_the_question_shows_what_will_run(tmp_path: Path) -> None:
    command = hook_command(tmp_path / "hooks", "swap", SWAP)
    approver = ScriptedApprover(default="approve")
    system, chat, lines = _hooked(tmp_path, [{"matcher": "Bash", "hooks": [command]}], approver)
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo one"})])
    request = approver.requests[0]
    assert request.prompt.startswith("Run the command `echo two`?")
    assert request.editable_text == "echo two" and request.arguments["cmd"] == "echo two"
    result = chat.result("c1")
    assert chat.final_status("c1") == "success"
    assert result.for_llm.startswith("Note: a hook changed this call's arguments; it runs with {")
    assert '"cmd": "echo two"' in result.for_llm and "\ntwo" in result.for_llm
    assert lines == [f"hook `{command[:60]}` changed the call's arguments"]
    # The same arguments given back change nothing: no note, no line.
    await system.run([ToolCall("c2", "run_command", {"cmd": "echo same"})])
    same = chat.result("c2").for_llm
    assert "same" in same and "a hook changed" not in same
    assert len(lines) == 1


async def test_updated_input_against_the_schema_is_one_line_and_nothing_runs(
    tmp_path: Path,
) -> None:
    bad = {"matcher": "Bash", "hooks": [_says(_pre("allow", updatedInput={"cmd": 5}))]}
    approver = ScriptedApprover(default="approve")
    system, chat, _ = _hooked(tmp_path, [bad], approver)
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo one"})])
    result = chat.result("c1")
    assert result.is_error and approver.requests == []
    assert result.for_llm.startswith("A hook gave this call arguments run_command cannot take: ")
    assert "5 is not of type 'string'" in result.for_llm and "\n" not in result.for_llm


async def test_a_new_file_path_is_the_tools_filepath(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    moved = {"file_path": str(tmp_path / "b.txt")}
    hook = {"matcher": "Read", "hooks": [_says(_pre(None, updatedInput=moved))]}
    system, chat, _ = _hooked(tmp_path, [hook], ScriptedApprover())
    args = {"filepath": "a.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    await system.run([ToolCall("c1", "read_file", args)])
    text = chat.result("c1").for_llm
    assert "beta" in text and "alpha" not in text and '"filepath": "b.txt"' in text


async def test_a_tools_own_approval_step_comes_before_a_hooks_question(tmp_path: Path) -> None:
    said: list[bool] = []

    def approved(self: Any, tools: Any) -> bool:
        return said.pop(0)

    tool = simple(lambda self, args, input: "ran")
    tool["handlers"] = {"approved": approved}
    h = make({"t": tool}, approver=ScriptedApprover(default="reject"), cwd=tmp_path)
    table = read_table({"PreToolUse": [{"hooks": [_says(_pre("ask", "why"))]}]}, "hooks")
    _hook(h.system, tmp_path, table)
    said.extend([True, False])
    await h.run(call("t", id="yes"))
    await h.run(call("t", id="no"))
    assert h.approver.prompts == ["A hook asks (why): Run the t tool?"]  # only after its yes
    assert h.chat.final_status("yes") == "rejected" and h.chat.final_status("no") == "rejected"
    assert json.dumps(said) == "[]"


async def test_a_pre_tool_use_hooks_context_reaches_the_model_with_the_result(
    tmp_path: Path,
) -> None:
    said = _pre(None, additionalContext="this project formats with tabs")
    system, chat, _ = _hooked(tmp_path, [{"hooks": [_says(said)]}], ScriptedApprover())
    await system.run([ToolCall("c1", "run_command", {"cmd": "echo hi"})])
    text = chat.result("c1").for_llm
    assert text.startswith("A hook before this call says: this project formats with tabs\n")
    assert "hi" in text
