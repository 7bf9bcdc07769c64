"""The chat buffer on a real headless Neovim, with the loopback server playing the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def chat_ready(ed: Editor, count: int = 1) -> None:
    ed.wait_event("CodeCompanionChatDone", count)
    wait_for(lambda: "## Me" in ed.lines()[-3:], 5)


def test_typed_message_is_sent_and_streamed_text_lands_exactly(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    answer = "Here is **markdown** with ünïcode 世界 and\na second line.\n\n```lua\nprint(1)\n```"
    provider_server.enqueue(openai_text(answer, chunks=40))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("Hello there")
    chat_ready(ed)
    text = ed.text(bufnr)
    assert "## LLM (openai · gpt-test)" in text
    assert answer in text
    body = provider_server.requests[0].json()
    assert body["messages"][-1] == {"role": "user", "content": "Hello there"}
    assert body["messages"][0]["role"] == "system"
    names = ed.event_names()
    for name in (
        "CodeCompanionChatCreated",
        "CodeCompanionChatSubmitted",
        "CodeCompanionRequestStarted",
        "CodeCompanionRequestStreaming",
        "CodeCompanionRequestFinished",
        "CodeCompanionChatDone",
    ):
        assert name in names
    assert ed.nvim.api.get_option_value("modifiable", {"buf": bufnr})


def test_stop_mid_stream_keeps_partial_answer_and_next_submit_works(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("word " * 200, chunks=200, delay=0.05)
    provider_server.enqueue(slow, openai_text("second answer"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("long please")
    wait_for(lambda: "word word" in ed.text(bufnr))
    ed.nvim.input("q")
    chat_ready(ed)
    assert "CodeCompanionChatStopped" in ed.event_names()
    assert "[incomplete: stopped]" in ed.text(bufnr)
    ed.send("again")
    chat_ready(ed, 2)
    assert "second answer" in ed.text(bufnr)
    second = provider_server.requests[1].json()["messages"]
    assert second[-1]["content"] == "again"


def test_two_chats_run_independently(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("answer one"), openai_text("answer two"))
    ed = start_nvim(config_file=config_file(""))
    first = ed.open_chat()
    ed.send("one")
    chat_ready(ed)
    second = ed.open_chat()
    assert first != second
    ed.send("two")
    chat_ready(ed, 2)
    assert "answer one" in ed.text(first) and "answer two" not in ed.text(first)
    assert "answer two" in ed.text(second)
    assert len(provider_server.requests[1].json()["messages"]) == 2  # system + "two" only


def test_saved_chat_is_restored_and_continues(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("remember 42"), openai_text("it was 42"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("pick a number")
    chat_ready(ed)
    saved = list((ed.tmp / "data" / "nvim" / "codecompanion" / "chats").glob("*.json"))
    assert len(saved) == 1
    state = json.loads(saved[0].read_text())
    assert [m["role"] for m in state["messages"]] == ["system", "user", "llm"]
    ed.nvim.command(f"bwipeout! {bufnr}")
    ed.answer(1)
    ed.nvim.command("CodeCompanionChat Restore")
    ed.wait_event("CodeCompanionChatRestored")
    restored = ed.nvim.current.buffer.number
    wait_for(lambda: "remember 42" in ed.text(restored))
    ed.send("what was it?")
    ed.wait_event("CodeCompanionChatDone", 2)
    messages = provider_server.requests[1].json()["messages"]
    assert [m["content"] for m in messages[1:]] == ["pick a number", "remember 42", "what was it?"]


def test_empty_message_does_nothing(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()
    ed.nvim.input("<CR>")
    wait_for(
        lambda: (
            "nothing to send"
            in ed.nvim.exec_lua("return vim.v.errmsg .. (vim.fn.execute('messages'))")
        )
    )
    assert "CodeCompanionChatSubmitted" not in ed.event_names()


def test_editing_earlier_turns_does_not_change_stored_messages(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("first answer"), openai_text("ok"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("first question")
    chat_ready(ed)
    ed.nvim.api.buf_set_lines(bufnr, 0, 2, False, ["## Me", "tampered text"])
    ed.send("second")
    ed.wait_event("CodeCompanionChatDone", 2)
    contents = [m["content"] for m in provider_server.requests[1].json()["messages"]]
    assert "first question" in contents and "tampered text" not in contents
    assert contents[-1] == "second"


def test_keymaps_help_clear_and_yolo(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("an answer"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("hi")
    chat_ready(ed)
    ed.nvim.input("gty")
    wait_for(lambda: ed.lua("return vim.b[...].codecompanion_yolo", bufnr) is True)
    ed.nvim.input("gx")
    ed.wait_event("CodeCompanionChatCleared")
    wait_for(lambda: ed.lines(bufnr)[0] == "## Me" and "an answer" not in ed.text(bufnr))
    ed.nvim.input("?")
    wait_for(lambda: ed.nvim.current.buffer.number != bufnr)
    assert any("Send the message" in line for line in ed.nvim.current.buffer[:])


def test_selection_is_added_as_a_fenced_block(start_nvim: StartNvim, tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text("a = 1\nb = 2\nc = 3\n")
    ed = start_nvim(cwd=tmp_path)
    ed.nvim.command(f"edit {source}")
    ed.nvim.command("2,3CodeCompanionChat Add")
    chat = ed.lua("return require('codecompanion').last_chat()")
    text = ed.text(chat)
    assert "`sample.py` lines 2-3:" in text
    assert "```python\nb = 2\nc = 3\n```" in text


def test_prompt_argument_toggle_and_close_mid_stream(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("tick " * 100, chunks=100, delay=0.05)
    provider_server.enqueue(slow)
    ed = start_nvim(config_file=config_file(""))
    ed.nvim.command("CodeCompanionChat Explain  this   please")
    bufnr = ed.nvim.current.buffer.number
    ed.wait_event("CodeCompanionRequestStreaming")
    body = provider_server.requests[0].json()
    assert body["messages"][-1]["content"] == "Explain  this   please"
    ed.nvim.command("CodeCompanionChat Toggle")
    assert ed.lua("return #vim.fn.win_findbuf(...)", bufnr) == 0
    ed.nvim.command("CodeCompanionChat Toggle")
    assert ed.lua("return #vim.fn.win_findbuf(...)", bufnr) == 1
    ed.nvim.command(f"bwipeout! {bufnr}")
    ed.wait_event("CodeCompanionChatClosed")
    folder = ed.tmp / "data" / "nvim" / "codecompanion" / "chats"

    def last_saved() -> dict | None:
        files = list(folder.glob("*.json"))
        message = json.loads(files[0].read_text())["messages"][-1] if files else None
        return message if message and message["role"] == "llm" else None

    last = wait_for(last_saved)
    assert last["extra"]["incomplete"] == "stopped" and last["content"].startswith("tick")


def test_omnifunc_completes_tools_and_groups(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()
    # The items come from a cache the host fills when it starts: omnifunc never waits on it.
    items = wait_for(
        lambda: ed.lua(
            "return vim.bo.omnifunc ~= '' and require('codecompanion.complete').omnifunc(0, '@{re')"
        )
    )
    words = [item["word"] for item in items]
    assert "@{read_file}" in words
    groups = ed.lua("return require('codecompanion.complete').omnifunc(0, '@{fi')")
    assert {"@{files}", "@{file_search}"} <= {g["word"] for g in groups}


def test_regenerate_and_turn_jumps(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("first try"), openai_text("second try"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("question")
    chat_ready(ed)
    ed.nvim.input("gr")
    chat_ready(ed, 2)
    assert "second try" in ed.text(bufnr)
    assert len(provider_server.requests[1].json()["messages"]) == 2
    ed.nvim.command("normal! gg")
    ed.nvim.input("]]")
    wait_for(lambda: ed.nvim.current.line.startswith("## LLM"))
    ed.nvim.input("[[")
    wait_for(lambda: ed.nvim.current.line == "## Me")


def test_change_adapter_and_model_with_ga(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    extra = (
        "adapters['openai_compatible'] = "
        f"{{'url': '{provider_server.url}/v1', 'api_key': 'k2', 'model': 'other'}}\n"
    )
    provider_server.enqueue(openai_text("from the new model"))
    ed = start_nvim(config_file=config_file(extra))
    bufnr = ed.open_chat()
    ed.answer("openai_compatible", 1)
    ed.nvim.input("ga")
    ed.wait_event("CodeCompanionChatModel")
    models = [p for p in ed.prompts() if p["prompt"] == "Model"][0]["items"]
    assert models  # listed from the loopback server's /models
    assert "CodeCompanionChatAdapter" in ed.event_names()
    ed.send("hi")
    ed.wait_event("CodeCompanionChatDone")
    assert provider_server.requests[-1].json()["model"] == models[0]
    assert f"## LLM (openai_compatible · {models[0]})" in ed.text(bufnr)


def test_buffer_is_read_only_while_streaming_and_view_follows_only_from_the_end(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("line\n" * 60, chunks=60, delay=0.03)
    provider_server.enqueue(slow, openai_text("more\n" * 60, chunks=60))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("stream please")
    ed.wait_event("CodeCompanionRequestStreaming")
    assert not ed.nvim.api.get_option_value("modifiable", {"buf": bufnr})
    chat_ready(ed)
    assert ed.nvim.api.get_option_value("modifiable", {"buf": bufnr})
    assert ed.nvim.current.window.cursor[0] == len(ed.lines(bufnr))  # followed to the end
    ed.send("again")
    ed.wait_event("CodeCompanionRequestStreaming", 2)
    ed.nvim.current.window.cursor = (1, 0)  # the user scrolls up to read
    chat_ready(ed, 2)
    assert ed.nvim.current.window.cursor[0] == 1


def test_completion_sources_for_cmp_and_blink_list_tools(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()
    # Both answer through their callbacks, once the host's items are there.
    ed.lua(
        "_G.out = {};"
        "require('codecompanion.completion.cmp').new():complete({}, function(r) out.cmp = r end);"
        "require('codecompanion.completion.blink').new():get_completions({}, function(r)"
        " out.blink = r end)"
    )
    got = wait_for(lambda: ed.lua("return (out.cmp and out.blink) and out or nil"))
    for source in ("cmp", "blink"):
        labels = {item["label"] for item in got[source]["items"]}
        assert {"@{read_file}", "@{agent}"} <= labels


def test_closing_the_window_mid_stream_stops_and_saves(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("tock " * 100, chunks=100, delay=0.05)
    provider_server.enqueue(slow)
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("go")
    ed.wait_event("CodeCompanionRequestStreaming")
    ed.nvim.command("close")
    ed.wait_event("CodeCompanionChatStopped")
    assert "[incomplete: stopped]" in ed.text(bufnr)
    ed.nvim.command("CodeCompanionChat Toggle")
    assert ed.nvim.current.buffer.number == bufnr  # the chat is still there to continue


def test_add_without_range_takes_the_cursor_line(start_nvim: StartNvim, tmp_path: Path) -> None:
    source = tmp_path / "one.lua"
    source.write_text("local a = 1\nlocal b = 2\n")
    ed = start_nvim(cwd=tmp_path)
    ed.nvim.command(f"edit {source}")
    ed.nvim.current.window.cursor = (2, 0)
    ed.nvim.command("CodeCompanionChat Add")
    chat = ed.lua("return require('codecompanion').last_chat()")
    assert "`one.lua` lines 2-2:\n```lua\nlocal b = 2\n```" in ed.text(chat)


def test_ctrl_s_sends_from_insert_mode_and_ctrl_c_stops(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    slow = openai_text("tick " * 100, chunks=100, delay=0.05)
    provider_server.enqueue(slow)
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.nvim.input("Go" + "from insert mode")
    wait_for(lambda: ed.nvim.api.get_mode()["mode"] == "i")
    ed.nvim.input("<C-s>")
    ed.wait_event("CodeCompanionRequestStreaming")
    assert provider_server.requests[0].json()["messages"][-1]["content"] == "from insert mode"
    ed.nvim.input("<C-c>")
    ed.wait_event("CodeCompanionChatStopped")
    assert "[incomplete: stopped]" in ed.text(bufnr)
