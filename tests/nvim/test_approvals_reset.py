"""Forgetting a chat's approvals (`gtx`, `:CodeCompanionChat Approvals`) and YOLO (`gty`,
`:CodeCompanionChat Yolo`), shown in status(); `gx` keeps them, as CodeCompanion does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.e2e import ECHO
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def echo_turn(server: LoopbackServer, call_id: str) -> None:
    server.enqueue(openai_tool_calls([(call_id, "echo", {"text": call_id})]), openai_text("ok"))


def status(ed: Editor) -> str:
    return str(ed.lua("return require('codecompanion').status()"))


def asked(ed: Editor) -> int:
    return sum(1 for p in ed.prompts() if p["kind"] == "codecompanion.approval")


def messages(ed: Editor) -> str:
    return str(ed.lua("return vim.api.nvim_exec2('messages', {output = true}).output"))


def test_forget_approvals_and_yolo_with_keymaps_and_commands(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    ed = start_nvim(config_file=config_file(ECHO.replace("NAME", "echo")))
    ed.open_chat()
    echo_turn(provider_server, "e1")
    ed.answer("always")
    ed.send("@{echo} one")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    wait_for(lambda: "1 approved" in status(ed))
    # gx keeps what the chat remembers: the next call runs without asking.
    ed.nvim.input("gx")
    ed.wait_event("CodeCompanionChatCleared")
    echo_turn(provider_server, "e2")
    ed.send("@{echo} two")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=20)
    assert asked(ed) == 1
    # gty: YOLO on, in status().
    ed.nvim.input("gty")
    wait_for(lambda: "YOLO" in status(ed) and "YOLO mode on" in messages(ed))
    # gtx forgets both, says so in one line, and the next call asks again.
    ed.nvim.input("gtx")
    wait_for(lambda: "1 remembered approval forgotten; YOLO mode off" in messages(ed))
    wait_for(lambda: "YOLO" not in status(ed) and "approved" not in status(ed))
    echo_turn(provider_server, "e3")
    ed.answer("approve")
    ed.send("@{echo} three")
    ed.wait_event("CodeCompanionChatDone", count=3, timeout=20)
    assert asked(ed) == 2
    # The same through the command, from another window.
    ed.nvim.command("CodeCompanionChat Yolo")
    wait_for(lambda: "YOLO" in status(ed) and messages(ed).count("YOLO mode on") == 2)
    ed.nvim.command("wincmd p")
    ed.nvim.command("CodeCompanionChat Approvals")
    wait_for(lambda: "YOLO" not in status(ed))
    wait_for(lambda: "0 remembered approvals forgotten; YOLO mode off" in messages(ed))
