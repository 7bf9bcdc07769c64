"""The Python host killed with SIGKILL mid-stream and mid-tool: noticed, restarted on the next
action, the chat restored from disk and valid, and no tool process left behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.faults import host_pid, kill_host, messages_area, saved_chat, turn_done
from tests.support.nvim import Editor, wait_for
from tests.support.proctable import wait_until_gone, with_marker
from tests.support.shapes import check_openai, check_saved_messages

StartNvim = Callable[..., Editor]


def test_host_killed_mid_stream_restarts_and_the_chat_continues(
    start_nvim: StartNvim, fast_config: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("word " * 100, chunks=100, delay=0.05)
    provider_server.enqueue(slow, openai_text("after the crash"))
    ed = start_nvim(config_file=fast_config(""))
    bufnr = ed.open_chat()
    ed.send("long please")
    wait_for(lambda: "word word" in ed.text(bufnr))
    old = kill_host(ed)
    wait_for(lambda: "host exited" in messages_area(ed))
    ed.send("still there?")
    turn_done(ed)
    assert host_pid(ed) != old
    assert "after the crash" in ed.text(bufnr)
    body = provider_server.requests[-1].json()["messages"]
    check_openai(body)
    assert body[1] == {"role": "user", "content": "long please"}
    assert body[-1]["role"] == "user" and body[-1]["content"].endswith("still there?")
    check_saved_messages(saved_chat(ed)["messages"])


def test_after_a_crash_the_next_message_is_only_what_the_user_typed(
    start_nvim: StartNvim, fast_config: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("word " * 100, chunks=100, delay=0.05)
    provider_server.enqueue(slow, openai_text("after the crash"))
    ed = start_nvim(config_file=fast_config(""))
    bufnr = ed.open_chat()
    ed.send("long please")
    wait_for(lambda: "word word" in ed.text(bufnr))
    kill_host(ed)
    ed.send("still there?")
    turn_done(ed)
    body = provider_server.requests[-1].json()["messages"]
    assert [m["content"] for m in body if m["role"] == "user"] == ["long please", "still there?"]


def test_host_killed_mid_tool_leaves_no_process_and_no_orphaned_call(
    start_nvim: StartNvim,
    fast_config: Callable[[str], Path],
    provider_server: LoopbackServer,
    marker: str,
    tmp_path: Path,
) -> None:
    command = f"sleep 60 & sleep 61; echo {marker}"
    provider_server.enqueue(
        openai_tool_calls([("run1", "run_command", {"cmd": command})]),
        openai_text("after the crash"),
    )
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(config_file=fast_config(""), cwd=project)
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("@{run_command} sleep a while")
    shells = wait_for(lambda: with_marker(marker))
    groups = {p.pgid for p in shells}
    assert len(wait_until_gone(groups, 0.3)) >= 3  # sh and both sleeps are running
    kill_host(ed)
    left = wait_until_gone(groups, 5)
    assert left == [], f"tool processes outlived the host: {left}"
    ed.send("what happened?")
    turn_done(ed)
    body = provider_server.requests[-1].json()["messages"]
    check_openai(body)
    result = next(m for m in body if m["role"] == "tool")
    assert result["tool_call_id"] == "run1"
    assert "after the crash" in ed.text(bufnr)
    check_saved_messages(saved_chat(ed)["messages"])
