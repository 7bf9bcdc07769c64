"""Hooks: the table read from config and Claude Code's settings, one hook run (exit codes, JSON
answers, timeouts, functions), and PreToolUse/PostToolUse around real tool calls."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from codecompanion.hooks import ChatHooks, HookTable, read_table, settings_table
from codecompanion.hooks.run import HookRun, Where, run_hook
from codecompanion.hooks.table import CallableHook, CommandHook
from codecompanion.hooks.verdict import verdict
from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.hook_scripts import BLOCK_RM, FORMAT, hook_command
from tests.support.tools import builtin_system


def _hooked(root: Path, table: HookTable, approver: ScriptedApprover) -> tuple[ToolSystem, Any]:
    system, chat = builtin_system(root, "agent", approver=approver)
    lines: list[str] = []
    system.hooks = ChatHooks(table, lambda: Where(root, system.environment()), "chat-1")
    system.hooks.say = lines.append
    return system, (chat, lines)


def test_the_table_takes_claude_code_shapes_and_says_what_it_cannot_read(tmp_path: Path) -> None:
    def mine(event: dict[str, Any]) -> None:
        return None

    table = read_table(
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "true", "timeout": 5}],
                },
                {"matcher": "Edit|Write", "hooks": [mine, "echo hi"]},
                {"matcher": "x", "hooks": [{"type": "prompt", "prompt": "?"}]},
            ],
            "Nope": [],
        },
        "hooks",
    )
    bash = table.hooks("PreToolUse", "run_command")
    assert bash == [CommandHook("true", 5.0, "hooks")]
    edit = table.hooks("PreToolUse", "insert_edit_into_file")
    assert isinstance(edit[0], CallableHook) and edit[1] == CommandHook("echo hi", source="hooks")
    assert table.hooks("PreToolUse", "read_file") == []
    assert table.problems == [
        "hooks: hooks['PreToolUse'][2]['hooks'][0]: only command hooks run here (type 'prompt' "
        "with a `command` text)",
        "hooks: unknown hook event 'Nope' (PreToolUse, PostToolUse, UserPromptSubmit, Stop, "
        "PreCompact, SessionStart)",
    ]
    (tmp_path / ".claude").mkdir()
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    (tmp_path / ".claude/settings.json").write_text(json.dumps(settings))
    (tmp_path / ".claude/settings.local.json").write_text("{broken")
    found = settings_table(tmp_path, tmp_path / "home")
    assert found.hooks("Stop") == [CommandHook("say done", source=".claude/settings.json")]
    assert found.problems[0].startswith(".claude/settings.local.json: cannot be read")


async def test_exit_codes_json_answers_and_functions_as_claude_code_reads_them(
    tmp_path: Path,
) -> None:
    where = Where(tmp_path, {"PATH": "/usr/bin:/bin"})
    event = {"hook_event_name": "PreToolUse", "tool_input": {"command": "ls"}}
    ok = await run_hook(CommandHook("cat >/dev/null; echo fine"), event, where)
    blocked = await run_hook(CommandHook("echo nope >&2; exit 2"), event, where)
    broken = await run_hook(CommandHook("echo oops >&2; exit 1"), event, where)
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}
    answered = await run_hook(CommandHook(f"echo '{json.dumps(deny)}'"), event, where)
    said = verdict("PreToolUse", [ok, broken])
    assert not said.blocked and said.notices == ["hook `echo oops >&2; exit 1` exit 1: oops"]
    assert verdict("PreToolUse", [blocked]).reason == "nope"
    assert verdict("PreToolUse", [answered]).reason == "no"
    assert not verdict("PreCompact", [blocked]).blocked  # said, not blocking
    context = verdict("UserPromptSubmit", [ok])
    assert context.context == ["fine"] and not context.blocked

    async def later(data: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "block", "reason": f"saw {data['tool_input']['command']}"}

    def crashes(data: dict[str, Any]) -> None:
        raise RuntimeError("bad hook")

    runs = [await run_hook(CallableHook(f), event, where) for f in (later, crashes)]
    said = verdict("PreToolUse", runs)
    assert said.blocked and said.reason == "saw ls"
    assert said.notices[-1] == "hook crashes() failed: bad hook"


def _answer(label: str, answer: dict[str, Any]) -> HookRun:
    return HookRun(label, answer=answer)


def _pre(decision: str, reason: str = "", **more: Any) -> dict[str, Any]:
    specific = {"hookEventName": "PreToolUse", "permissionDecision": decision, **more}
    if reason:
        specific["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": specific}


def test_pre_tool_use_permission_is_deny_over_ask_over_allow() -> None:
    allow, ask = _answer("a", _pre("allow")), _answer("b", _pre("ask", "look at it first"))
    deny = _answer("c", _pre("deny", "never"))
    assert verdict("PreToolUse", [allow]).permission == "allow"
    said = verdict("PreToolUse", [allow, ask])
    assert said.permission == "ask" and said.asking == ["look at it first"]
    assert verdict("PreToolUse", [ask, allow]).permission == "ask"
    assert verdict("PreToolUse", [allow, ask, deny]).blocked
    assert verdict("PreToolUse", [_answer("old", {"decision": "approve"})]).permission == "allow"
    assert verdict("PreToolUse", [_answer("d", _pre("ask"))]).asking == ["hook d asks"]
    assert verdict("PostToolUse", [allow]).permission is None  # only before a call
    # The repository's own hook (.claude/settings.json) may ask or deny, never spare a question.
    theirs = HookRun("t", answer=_pre("allow"), from_project=True)
    assert verdict("PreToolUse", [theirs]).permission is None
    asks = HookRun("t", answer=_pre("ask", "why"), from_project=True)
    assert verdict("PreToolUse", [asks]).permission == "ask"


def test_pre_tool_use_updated_input_is_taken_once_and_said() -> None:
    new = {"cmd": "ls -la"}
    said = verdict("PreToolUse", [_answer("a", _pre("allow", updatedInput=new))])
    assert said.updated_input == new and said.changed_by == ["a"] and said.notices == []
    same = verdict("PreToolUse", [_answer(n, _pre("ask", updatedInput=new)) for n in "ab"])
    assert same.updated_input == new and not same.blocked and same.changed_by == ["a", "b"]
    other = _answer("b", _pre("allow", updatedInput={"cmd": "rm x"}))
    differ = verdict("PreToolUse", [_answer("a", _pre("allow", updatedInput=new)), other])
    assert differ.blocked and differ.updated_input is None
    assert differ.reason == "hooks gave different arguments for this call"
    assert verdict("PreToolUse", [_answer("a", _pre("allow", updatedInput="x"))]).notices == []


async def test_a_hook_that_hangs_is_killed_at_its_timeout_with_one_line(tmp_path: Path) -> None:
    where = Where(tmp_path, {"PATH": "/usr/bin:/bin"})
    started = time.monotonic()
    run = await run_hook(CommandHook("sleep 30", timeout=0.5), {}, where)
    assert time.monotonic() - started < 5
    assert run.failed == "hook `sleep 30` timed out after 0.5s: killed"


async def test_pre_tool_use_blocks_rm_rf_before_any_question(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    command = hook_command(tmp_path / "hooks", "block_rm", BLOCK_RM)
    table = read_table({"PreToolUse": [{"matcher": "Bash", "hooks": [command]}]}, "hooks")
    approver = ScriptedApprover(default="approve")
    system, (chat, lines) = _hooked(tmp_path, table, approver)
    await system.run([ToolCall("c1", "run_command", {"cmd": "rm -rf build"})])
    result = chat.result("c1")
    assert result.is_error
    assert "A hook blocked this call: rm -rf is not allowed here: name the files" in result.for_llm
    assert (tmp_path / "build").is_dir() and approver.requests == []
    assert lines == [
        "hook `" + command[:60] + "` blocked PreToolUse: rm -rf is not allowed here: name the files"
    ]
    await system.run([ToolCall("c2", "run_command", {"cmd": "echo kept"})])
    assert not chat.result("c2").is_error and approver.requests  # others go on to the gate


async def test_post_tool_use_formats_the_edited_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    command = hook_command(tmp_path / "hooks", "format", FORMAT)
    table = read_table({"PostToolUse": [{"matcher": "Edit|Write", "hooks": [command]}]}, "hooks")
    system, (chat, _lines) = _hooked(tmp_path, table, ScriptedApprover(default="approve"))
    edits = [{"oldText": "    return 1", "newText": "\treturn 2", "replaceAll": False}]
    args = {"filepath": "a.py", "edits": edits, "explanation": "x", "mode": None}
    await system.run([ToolCall("c1", "insert_edit_into_file", args)])
    assert not chat.result("c1").is_error, chat.result("c1").for_llm
    assert (tmp_path / "a.py").read_text() == "def f():\n    return 2\n"


def _documented_config(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "doc", "exec"), namespace)  # the documented config, as runpy runs it
    return namespace


def test_the_documented_hooks_config_loads_and_blocks_rm_rf() -> None:
    import re
    import textwrap

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    section = readme[readme.index("**Hooks.**") :]
    help_text = (root / "doc" / "codecompanion.txt").read_text()
    block = re.findall(
        r">python\n(.*?)\n<", help_text[help_text.index("*codecompanion-hooks*") :], re.S
    )[0]
    for source in (re.findall(r"```python\n(.*?)```", section, re.S)[0], textwrap.dedent(block)):
        namespace = _documented_config(source)
        table = read_table(namespace["hooks"], "hooks")
        assert table.problems == [] and table.count() == 2
        rule = table.hooks("PreToolUse", "run_command")[0]
        assert isinstance(rule, CallableHook)
        said = rule.function({"tool_input": {"command": "rm -rf /"}})
        assert said == {"decision": "block", "reason": "name the files to delete"}
        assert table.hooks("PostToolUse", "create_file")


async def test_matchers_written_for_claude_code_match_an_mcp_servers_tools(tmp_path: Path) -> None:
    from codecompanion.adapters.keys import KeyResolver
    from codecompanion.mcp import McpManager
    from codecompanion.mcp.tools import register_servers
    from codecompanion.tools.model.registry import ToolRegistry
    from tests.support.mcp_servers import TIME_CMD

    seen: list[str] = []

    def no_clock(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event["claude_tool_name"])
        return {"decision": "block", "reason": "no clocks today"}

    manager = McpManager({"time": {"cmd": TIME_CMD}}, keys=KeyResolver({}), log_dir=tmp_path)
    registry = ToolRegistry({}, {})
    register_servers(manager, registry)
    approver = ScriptedApprover(default="approve")
    system, chat = builtin_system(tmp_path, registry=registry, approver=approver)
    table = read_table({"PreToolUse": [{"matcher": "mcp__time__.*", "hooks": [no_clock]}]}, "x")
    system.hooks = ChatHooks(table, lambda: Where(tmp_path, system.environment()), "chat-1")
    try:
        assert system.add_group("mcp:time") and await system.prepare() == []
        await system.run([ToolCall("c1", "time_get_current_time", {"timezone": "UTC"})])
    finally:
        await manager.aclose()
    assert seen == ["mcp__time__get_current_time"] and approver.requests == []
    assert "A hook blocked this call: no clocks today" in chat.result("c1").for_llm
