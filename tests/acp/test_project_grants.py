"""What a project's own agent settings let the agent do without asking: one line each, and the
agent started only when the user says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codecompanion.acp.project_grants import project_grants
from codecompanion.acp.settings import AgentSettings, parse_agent
from tests.support.acp_chat import AGENT as SCRIPTED_AGENT
from tests.support.acp_chat import agent_chat
from tests.support.fakes import ScriptedApprover

QWEN = (".qwen/settings.json",)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_allow_rules_and_unasked_modes_are_named(tmp_path: Path) -> None:
    rules = {"permissions": {"allow": ["Bash(*)", "Edit", "Read", "Bash(rm *)", "WebFetch"]}}
    write(tmp_path / ".qwen/settings.json", json.dumps(rules))
    assert project_grants(tmp_path, QWEN) == [
        ".qwen/settings.json allows Bash(*), Edit, Read, Bash(rm *) (+1)"
    ]
    write(tmp_path / ".qwen/settings.json", json.dumps({"tools": {"approvalMode": "yolo"}}))
    assert project_grants(tmp_path, QWEN) == [".qwen/settings.json allows mode yolo"]
    started = {
        "mcpServers": {"evil": {"command": "sh"}, "web": {"httpUrl": "http://x"}},
        "hooks": {"SessionStart": [], "PreToolUse": []},
    }
    write(tmp_path / ".qwen/settings.json", json.dumps(started))
    assert project_grants(tmp_path, QWEN) == [
        ".qwen/settings.json starts MCP servers evil (sh), web (http://x);"
        " runs hooks on PreToolUse, SessionStart"
    ]
    claude = {"permissions": {"defaultMode": "bypassPermissions"}}
    write(tmp_path / ".claude/settings.json", json.dumps(claude))
    files = parse_agent("claude_code", {}).project_settings
    assert project_grants(tmp_path, files) == [
        ".claude/settings.json allows mode bypassPermissions"
    ]


def test_files_that_grant_nothing_or_are_absent_say_nothing(tmp_path: Path) -> None:
    assert project_grants(tmp_path, QWEN) == []
    quiet = {"permissions": {"allow": [], "deny": ["Bash(*)"]}, "tools": {"approvalMode": "plan"}}
    write(tmp_path / ".qwen/settings.json", json.dumps(quiet))
    assert project_grants(tmp_path, QWEN) == []
    write(tmp_path / ".qwen/settings.json", json.dumps({"permissions": {"allow": "Bash(*)"}}))
    assert project_grants(tmp_path, QWEN) == []  # not a list of rules


def test_a_file_that_cannot_be_checked_is_said_to_be_unknown(tmp_path: Path) -> None:
    write(tmp_path / ".qwen/settings.json", '{"permissions": {"allow": ["Bash(*)"]}, // hi\n}')
    assert project_grants(tmp_path, QWEN) == [
        ".qwen/settings.json (not plain JSON: what it allows is unknown)"
    ]
    (tmp_path / ".qwen/settings.json").write_bytes(b"\xff\xfe")
    assert project_grants(tmp_path, QWEN) == [
        ".qwen/settings.json (unreadable: what it allows is unknown)"
    ]


def test_the_presets_name_the_files_their_agents_read() -> None:
    assert parse_agent("qwen_code", {}).project_settings == QWEN
    assert parse_agent("gemini_cli", {}).project_settings == (".gemini/settings.json",)
    assert parse_agent("mine", {"cmd": ["x"]}).project_settings == ()


async def test_an_agent_the_project_lets_act_unasked_starts_only_when_the_user_says_so(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project / ".agent/settings.json", json.dumps({"permissions": {"allow": ["Bash(*)"]}}))
    state = tmp_path / "agent-state.json"
    settings = AgentSettings(
        name="scripted",
        cmd=(sys.executable, "-I", str(SCRIPTED_AGENT)),
        env={"SCRIPTED_STATE": str(state)},
        project_settings=(".agent/settings.json",),
    )
    approver = ScriptedApprover("reject", "approve")
    chat = agent_chat(tmp_path, approver=approver, settings=settings)
    try:
        await chat.turn("echo hi")
        assert chat.answers() == [] and chat.driver.connection is None  # never started
        said = chat.notices()
        assert "scripted acts without asking where the project's" in said
        assert ".agent/settings.json allows Bash(*)" in said and "scripted not started" in said
        request = approver.requests[0]
        assert request.choices == ("approve", "reject")
        assert request.arguments == {"project": ".agent/settings.json allows Bash(*)"}
        await chat.turn("echo again")
        assert chat.answers() == ["Hello: again"]
        await chat.turn("echo more")  # asked once a chat
        assert len(approver.requests) == 2
    finally:
        await chat.close()
