"""Labels say what happens: the Restore picker, restored messages, gO, the keymap window."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.e2e import run_command_turn
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def chats_folder(ed: Editor) -> Path:
    return ed.tmp / "data" / "nvim" / "codecompanion" / "chats"


def save(folder: Path, chat_id: str, updated: str, messages: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    state = {"id": chat_id, "title": None, "updated": updated, "messages": messages}
    (folder / f"{chat_id}.json").write_text(json.dumps(state))


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": text}


def test_restore_picker_shows_last_message_time_and_first_line(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("sure"))
    ed = start_nvim(config_file=config_file(""))
    folder = chats_folder(ed)
    save(folder, "old-1", "2026-01-02 10:00:00", [user("first line\nsecond line")])
    save(folder, "old-2", "2026-01-01 09:00:00", [user("older chat")])
    save(folder, "empty-1", "2026-01-03 11:00:00", [])
    bufnr = ed.open_chat()
    ed.send("a new question")
    ed.wait_event("CodeCompanionChatDone")
    chat_id = ed.lua("return vim.b[...].codecompanion_chat_id", bufnr)
    stamp = json.loads((folder / f"{chat_id}.json").read_text())["updated"]
    time.sleep(1.1)
    ed.nvim.command(f"bwipeout! {bufnr}")  # closing saves again, but the time stays
    wait_for(lambda: json.loads((folder / f"{chat_id}.json").read_text())["updated"] == stamp)
    ed.answer(3)
    ed.nvim.command("CodeCompanionChat Restore")
    prompt = wait_for(lambda: [p for p in ed.prompts() if p["prompt"] == "Restore chat"])[0]
    assert prompt["items"] == [
        f"{stamp}  a new question",
        "2026-01-02 10:00:00  first line",
        "2026-01-01 09:00:00  older chat",
    ]
    ed.wait_event("CodeCompanionChatRestored")
    wait_for(lambda: "older chat" in ed.text(0))


def test_restored_chat_shows_what_was_typed(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    read = {"filepath": "a.txt", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    provider_server.enqueue(openai_tool_calls([("r1", "read_file", read)]), openai_text("done"))
    ed = start_nvim(config_file=config_file(""), cwd=tmp_path)
    bufnr = ed.open_chat()
    ed.send("@{read_file} 100*50 in a.txt")
    ed.wait_event("CodeCompanionChatDone")
    assert (
        "the read_file tool 100*50" in provider_server.requests[0].json()["messages"][-1]["content"]
    )
    chat_id = ed.lua("return vim.b[...].codecompanion_chat_id", bufnr)
    ed.nvim.command(f"bwipeout! {bufnr}")
    ed.lua("require('codecompanion').chat({restore = ...})", chat_id)
    ed.wait_event("CodeCompanionChatRestored")
    text = wait_for(lambda: "done" in ed.text(0) and ed.text(0))
    assert "@{read_file} 100*50 in a.txt" in text and "the read_file tool" not in text


def test_gO_opens_an_uncut_output_too(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    ed, bufnr = run_command_turn(
        start_nvim, config_file, provider_server, tmp_path / "small", "seq 1 3", "short output"
    )
    ed.nvim.api.set_current_buf(bufnr)
    row = next(i for i, line in enumerate(ed.lines(bufnr), 1) if "**run_command**" in line)
    ed.nvim.current.window.cursor = (row, 0)
    ed.nvim.input("gO")
    wait_for(lambda: ed.nvim.current.buffer.name.startswith("codecompanion://"))
    assert {"1", "2", "3"} <= set(ed.nvim.current.buffer[:])


def test_keymap_window_fits_its_content(start_nvim: StartNvim) -> None:
    ed = start_nvim()
    bufnr = ed.open_chat()
    ed.nvim.input("?")
    wait_for(lambda: ed.nvim.current.buffer.number != bufnr)
    lines = ed.nvim.current.buffer[:]
    widest = max(ed.nvim.funcs.strdisplaywidth(line) for line in lines)
    assert ed.nvim.current.window.width == max(widest, 20), lines
    # As tall as its lines, up to the screen's height less 6 rows (then it scrolls).
    assert ed.nvim.current.window.height == min(len(lines), ed.nvim.options["lines"] - 6)
