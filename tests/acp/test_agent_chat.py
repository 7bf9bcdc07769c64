"""A chat driven by a real (scripted) ACP agent process: updates, requests, failures."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from codecompanion import render_ops
from codecompanion.messages import MessageStore
from codecompanion.persistence.history import ChatStore
from tests.support.acp_chat import agent_chat
from tests.support.fakes import WAIT, ScriptedApprover


def ops_of(view: object, kind: type) -> list:
    return [op for op in view.ops if isinstance(op, kind)]  # type: ignore[attr-defined]


async def test_a_prompt_streams_the_answer_and_keeps_the_session(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("echo hi")
        assert chat.answers() == ["Hello: hi"]
        assert chat.view.appended().endswith("Hello: hi")
        headers = [op.text for op in ops_of(chat.view, render_ops.Header)]
        assert headers[0].startswith("## scripted")
        saved = ChatStore(tmp_path / "chats").load("a1")
        assert saved is not None and saved["driver"] == {"agent": "scripted", "session_id": "s1"}
        # Sent before `session/new` answered: kept and given to the chat once it knew the session.
        commands = [
            op
            for op in ops_of(chat.view, render_ops.SetVar)
            if op.name == "codecompanion_acp_commands"
        ]
        assert commands and commands[-1].value[0]["name"] == "review"
    finally:
        await chat.close()


async def test_every_update_kind_is_drawn_and_stored(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("kinds dir")
        view = chat.view
        text = view.text()
        assert "### Reasoning" in text and "thinking it over" in text
        tools = ops_of(view, render_ops.Tool)
        assert [t.title for t in tools] == ["`edit` Edit a.txt", "`read` Never finished"]
        assert tools[0].detail == "dir/a.txt:3"
        statuses = [(s.call_id, s.status) for s in ops_of(view, render_ops.ToolStatus)]
        assert ("t1", "running") in statuses and ("t1", "success") in statuses
        assert ("t2", "cancelled") in statuses  # left open by the agent: answered at the end
        plans = ops_of(view, render_ops.Plan)
        assert plans[0].lines == ["**Plan**", "- [~] read", "- [ ] write (!)"]
        assert plans[-1].plan_id == plans[0].plan_id  # rewritten in place
        assert plans[-1].lines[1:] == ["- [x] read", "- [x] write (!)"]
        meters = ops_of(view, render_ops.Meter)
        assert meters[-1].text == "1.2k/200.0k · $0.50 · scripted · mode Plan · large"
        assert chat.chat.title == "Scripted title"
        results = [m for m in chat.chat.messages if m.role == "tool"]
        assert [r.tool_call_id for r in results] == ["t1", "t2"]
        assert chat.chat.messages.pending_calls() == []
        stored = "\n".join(chat.answers())
        assert "- [x] write (!)" in stored and "Working." in stored and " Done." in stored
        assert not [
            line for line, _ in view.notices if "mystery" in line
        ]  # an unknown kind: ignored
    finally:
        await chat.close()


async def test_lines_that_are_not_messages_are_one_line_each_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("garbage")
        assert chat.answers() == ["still here"]
        said = chat.notices()
        assert "not JSON: this is not json" in said
        assert (
            "JSON list, not a message: [1, 2]" in said and "JSON int" in said and "JSON str" in said
        )
        await chat.turn("echo again")  # the connection survived
        assert chat.answers()[-1] == "Hello: again"
    finally:
        await chat.close()


async def test_a_five_megabyte_line_is_read_whole(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("big", timeout=60)
        assert len(chat.answers()[-1]) == 5 * 1024 * 1024
    finally:
        await chat.close()


async def test_a_chatty_agents_stderr_is_drained_into_its_log(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path, env={"SCRIPTED_STDERR": str(1024 * 1024)})
    try:
        await chat.turn("echo loud")
        assert chat.answers() == ["Hello: loud"]
        assert (chat.logs / "acp-scripted.log").stat().st_size > 1024 * 1024
    finally:
        await chat.close()


async def test_a_crash_is_one_line_and_the_next_turn_starts_the_agent_again(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("crash")
        said = chat.notices()
        assert "agent scripted exited (status 3): scripted agent: fatal: crashed on purpose" in said
        assert chat.answers()[0] == "about to die"
        await chat.turn("echo back")
        assert chat.answers()[-1] == "Hello: back"
        assert "starting it again" in chat.notices() or chat.driver.state.session_id == "s1"
    finally:
        await chat.close()


async def test_stop_cancels_the_turn_and_the_agent_ends_it(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        assert chat.chat.submit("hang")
        for _ in range(200):
            if "waiting" in chat.view.appended():
                break
            await asyncio.sleep(0.02)
        assert chat.chat.stop()
        assert chat.chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat.chat._task), 10)
        assert "ChatStopped" in chat.view.events()
        stored = [m for m in chat.chat.messages if m.role == "llm"]
        assert stored[-1].extra.get("incomplete") == "stopped"
        await chat.turn("echo after")  # the agent is still there and answers the next turn
        assert chat.answers()[-1] == "Hello: after"
    finally:
        await chat.close()


async def test_a_login_the_agent_needs_is_one_line(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path, env={"SCRIPTED_AUTH": "1"})
    try:
        await chat.turn("echo hi")
        said = chat.notices()
        assert "agent scripted needs a login" in said and "token (Token)" in said
    finally:
        await chat.close()


async def test_an_agent_logs_in_with_the_variables_it_names(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path, env={"SCRIPTED_AUTH": "1", "SCRIPTED_TOKEN": "t0ken"})
    try:
        await chat.turn("echo hi")
        assert chat.answers() == ["Hello: hi"]
    finally:
        await chat.close()


async def test_each_permission_option_kind_answers_the_agent(tmp_path: Path) -> None:
    approver = ScriptedApprover("approve", "always", "reject", "never")
    chat = agent_chat(tmp_path, approver=approver)
    try:
        for command in ("a", "b", "c", "d"):
            await chat.turn(f"ask {command}")
        assert chat.answers() == [
            "chosen: o-allow_once",
            "chosen: o-allow_always",
            "chosen: o-reject_once",
            "chosen: o-reject_always",
        ]
        assert [r.choices for r in approver.requests][0] == ("approve", "always", "reject", "never")
        assert approver.requests[0].arguments["always"] == "allow_always"  # the agent's words
        # "always" and "never" answer the same call again without asking.
        await chat.turn("ask b")
        await chat.turn("ask d")
        assert chat.answers()[-2:] == ["chosen: o-allow_always", "chosen: o-reject_always"]
        assert len(approver.requests) == 4
        # A reject rejects the call, not the turn: the agent went on and answered.
        statuses = [(s.call_id, s.status) for s in ops_of(chat.view, render_ops.ToolStatus)]
        assert ("pc", "error") in statuses
    finally:
        await chat.close()


async def test_a_call_first_met_in_a_question_is_drawn_and_gets_its_result(
    tmp_path: Path,
) -> None:
    approver = ScriptedApprover("approve")
    chat = agent_chat(tmp_path, approver=approver)
    try:
        await chat.turn("asknew ls")
        assert chat.answers() == ["chosen: o-allow"]
        tools = ops_of(chat.view, render_ops.Tool)
        assert [(t.call_id, t.title) for t in tools] == [("qls", "`execute` run ls")]
        statuses = [(s.call_id, s.status) for s in ops_of(chat.view, render_ops.ToolStatus)]
        assert ("qls", "success") in statuses
        result = chat.chat.messages.tool_result("qls")
        assert result is not None and "ls" in str(result.content)
    finally:
        await chat.close()


async def test_a_question_open_when_the_turn_stops_is_answered_cancelled(tmp_path: Path) -> None:
    approver = ScriptedApprover(WAIT)
    chat = agent_chat(tmp_path, approver=approver)
    try:
        assert chat.chat.submit("ask x")
        await asyncio.wait_for(approver.asked.wait(), 10)
        chat.chat.stop()
        assert chat.chat._task is not None
        await asyncio.wait_for(asyncio.shield(chat.chat._task), 10)
        await chat.turn("echo next")
        assert chat.answers()[-1] == "Hello: next"
    finally:
        await chat.close()


async def test_a_read_sees_the_unsaved_buffer(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        path = chat.root / "notes.txt"
        path.write_text("on disk\n")
        chat.editor.buffers[str(path)] = ["in the buffer"]
        await chat.turn(f"read {path}")
        assert chat.answers()[-1] == "read: in the buffer\n"
        chat.editor.buffers.clear()
        await chat.turn(f"read {path}")
        assert chat.answers()[-1] == "read: on disk\n"
    finally:
        await chat.close()


async def test_a_read_outside_the_project_is_asked_and_refused(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        secret = tmp_path / "secret.txt"
        secret.write_text("s3cret\n")
        await chat.turn(f"read {secret}")
        assert "outside the project" in chat.approver.questions[0]
        assert chat.answers()[-1].startswith("read failed:")
        assert "s3cret" not in chat.answers()[-1]
    finally:
        await chat.close()


async def test_a_write_is_reviewed_written_and_given_to_the_open_buffer(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        path = chat.root / "code.py"
        path.write_text("a = 1\n")
        chat.editor.buffers[str(path)] = ["a = 1"]
        await chat.turn(f"write {path} a = 2\\n")
        assert chat.answers()[-1] == "written"
        assert path.read_text() == "a = 2\n"
        assert chat.editor.reviews == [(str(path), ["a = 1"], ["a = 2"])]
        assert chat.editor.writes == [(str(path), ["a = 2"])]  # one change of the buffer
        chat.editor.decisions.append("reject")
        await chat.turn(f"write {path} a = 3\\n")
        assert chat.answers()[-1].startswith("write failed:") and path.read_text() == "a = 2\n"
    finally:
        await chat.close()


async def test_a_command_runs_through_the_terminal_and_its_output_comes_back(
    tmp_path: Path,
) -> None:
    chat = agent_chat(tmp_path, approver=ScriptedApprover(confirm_default=True))
    try:
        await chat.turn("run echo out; echo err >&2; exit 4")
        assert chat.answers()[-1] == "exit 4: out\nerr"
        assert chat.approver.questions and "Let scripted run" in chat.approver.questions[0]
        results = [m for m in chat.chat.messages if m.role == "tool"]
        assert "out" in (results[-1].content or "")
    finally:
        await chat.close()


async def test_a_restored_chat_loads_its_session_in_a_new_agent(tmp_path: Path) -> None:
    first = agent_chat(tmp_path)
    await first.turn("echo one")
    await first.close()
    saved = ChatStore(tmp_path / "chats").load("a1")
    assert saved is not None
    messages = MessageStore.from_list(saved["messages"])
    again = agent_chat(tmp_path, session_id=saved["driver"]["session_id"], messages=messages)
    try:
        await again.turn("echo two")
        assert again.answers() == ["Hello: one", "Hello: two"]  # the replay was not shown twice
        assert again.driver.state.session_id == "s1"
    finally:
        await again.close()


async def test_closing_leaves_no_process(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    await chat.turn("echo hi")
    connection = chat.driver.connection
    assert connection is not None
    pid = connection.process.process.pid
    await chat.close()
    assert connection.process.process.returncode is not None
    try:
        os.killpg(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive


async def test_a_burst_of_chunks_keeps_its_order(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("many")
        assert chat.answers()[-1] == "".join(f"{i}," for i in range(300))
    finally:
        await chat.close()


async def test_the_chats_mcp_servers_go_to_the_agent(tmp_path: Path) -> None:
    servers = {"servers": {"time": {"cmd": ["mcp-time"], "env": {"TZ": "UTC"}}}}
    chat = agent_chat(tmp_path, mcp=servers)
    try:
        await chat.turn("mcp")
        assert chat.answers()[-1] == "mcp: time"
    finally:
        await chat.close()


async def test_mode_and_model_are_set_from_the_chat(tmp_path: Path) -> None:
    chat = agent_chat(tmp_path)
    try:
        await chat.turn("echo hi")
        await chat.driver.set_mode("plan")
        await chat.driver.set_option("model", "large")
        assert chat.driver.state.mode == "plan" and chat.driver.state.model == "large"
        assert chat.chat.adapter.settings.model == "large"
        meter = ops_of(chat.view, render_ops.Meter)[-1]
        assert "mode Plan" in meter.text and "large" in meter.text
        modes = [
            op for op in ops_of(chat.view, render_ops.SetVar) if op.name == "codecompanion_acp_mode"
        ]
        assert modes[-1].value["current"] == "plan"
    finally:
        await chat.close()
