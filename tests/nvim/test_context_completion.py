"""Context in messages (#{buffer}, /file, /buffer), unknown @{name}, completion that never waits."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.nvim import Editor, ProjectNvim, wait_for

StartNvim = Callable[..., Editor]


def saved_chat(ed: Editor) -> dict[str, object]:
    folder = ed.tmp / "data" / "nvim" / "codecompanion" / "chats"
    files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    return dict(json.loads(files[-1].read_text()))


def messages(ed: Editor) -> str:
    return str(ed.nvim.exec_lua("return vim.api.nvim_exec2('messages', {output = true}).output"))


def test_hash_buffer_sends_the_buffer_the_user_was_in(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider_server.enqueue(openai_text("It subtracts."))
    ed = project_nvim()
    ed.nvim.command("edit calc.py")
    ed.nvim.current.buffer.append("# unsaved line")
    bufnr = ed.open_chat()
    ed.send("what is wrong in #{buffer}?")
    ed.wait_event("CodeCompanionChatDone")
    sent = provider_server.requests[0].json()["messages"][-1]["content"]
    assert "the buffer `calc.py`" in sent and "#{buffer}" not in sent
    assert "filetype python" in sent
    assert "1: def add(a, b):" in sent and "3: # unsaved line" in sent
    # In the chat: what was typed, then one folded line for the context.
    lines = ed.lines(bufnr)
    row = lines.index("> buffer `calc.py` (3 lines)") + 1
    assert "what is wrong in #{buffer}?" in lines
    win = ed.nvim.current.window.handle
    assert ed.lua(f"return vim.fn.win_execute({win}, 'echo foldclosed({row})')").strip() == str(row)
    message = [m for m in saved_chat(ed)["messages"] if m["role"] == "user"][-1]  # type: ignore[index]
    assert message["extra"]["typed"] == "what is wrong in #{buffer}?"
    assert message["extra"]["context"] == [{"kind": "buffer", "path": "calc.py", "lines": 3}]
    # Restored, the chat shows what was typed and the context line.
    chat_id = ed.lua("return vim.b[...].codecompanion_chat_id", bufnr)
    ed.nvim.command(f"bwipeout! {bufnr}")
    ed.lua("require('codecompanion').chat({restore = ...})", chat_id)
    ed.wait_event("CodeCompanionChatRestored")
    restored = wait_for(lambda: "It subtracts." in ed.text(0) and ed.lines(0))
    assert "what is wrong in #{buffer}?" in restored
    assert "> buffer `calc.py` (3 lines)" in restored


def test_slash_file_and_slash_buffer_add_context_through_vim_ui_select(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "a.txt").write_text("apple\n")
    (project / "b.md").write_text("# banana\n")
    provider_server.enqueue(openai_text("Two files."))
    ed = project_nvim()
    ed.nvim.command("edit b.md")
    bufnr = ed.open_chat()
    # /file through omnifunc: the completed word runs the picker and leaves the message.
    ed.answer("a.txt", 1)  # /buffer lists one buffer: b.md
    ed.nvim.command("set completeopt=menu,menuone")
    ed.nvim.input("Go/fi<C-x><C-o>")
    wait_for(lambda: ed.nvim.funcs.pumvisible() == 1)
    ed.nvim.input("<C-y>")
    wait_for(lambda: any(p["kind"] == "codecompanion.file" for p in ed.prompts()))
    ed.nvim.input("<Esc>")
    ed.lua("require('codecompanion.complete').run_command(...)", bufnr, "/buffer")
    wait_for(lambda: any(p["kind"] == "codecompanion.buffer" for p in ed.prompts()))
    file_prompt = next(p for p in ed.prompts() if p["kind"] == "codecompanion.file")
    assert {"a.txt", "b.md"} <= set(file_prompt["items"])
    pending = (
        "local n = 0 for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, 0, -1,"
        " {details = true})) do n = n + #(m[4].virt_lines or {}) end return n"
    )
    wait_for(lambda: ed.lua(pending) == 2)  # both wait under ## Me, shown as virtual lines
    assert "/fi" not in ed.text(bufnr)
    ed.send("compare them")
    ed.wait_event("CodeCompanionChatDone")
    sent = provider_server.requests[0].json()["messages"][-1]["content"]
    assert sent.startswith("compare them")
    assert "`a.txt`" in sent and "1: apple" in sent and "`b.md`" in sent and "1: # banana" in sent
    lines = ed.lines(bufnr)
    assert "> file `a.txt` (1 line)" in lines and "> buffer `b.md` (1 line)" in lines


def test_unknown_tool_mention_gets_one_line_naming_it(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("ok"))
    ed = start_nvim(config_file=config_file(""))
    ed.nvim.command("set columns=400")  # room for the whole line (narrower screens cut it)
    ed.open_chat()
    ed.send("@{read_fil} the README")
    ed.wait_event("CodeCompanionChatDone")
    # Notices arriving together are shown as one line 30 ms later: the turn may end before.
    shown = wait_for(lambda: [ln for ln in messages(ed).splitlines() if "unknown tool" in ln])
    assert len(shown) == 1
    assert "@{read_fil}" in shown[0] and "read_file" in shown[0] and "agent" in shown[0]


def test_completion_never_waits_on_the_host(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()
    pid = int(ed.lua("return vim.fn.jobpid(require('codecompanion.host').channel())"))
    wait_for(lambda: ed.lua("return #require('codecompanion.complete').omnifunc(0, '@{')") > 0)
    # A round trip first: a cache push the host sent earlier arrives before its reply, so none
    # can land after the invalidation below and answer the sources at once.
    ed.lua("require('codecompanion.host').request('completion_items')")
    # Old cache, frozen host: the sources answer later through their callbacks, and
    # omnifunc answers from what it has, at once.
    ed.lua("require('codecompanion.complete').invalidate(); _G.out = {}")
    os.kill(pid, signal.SIGSTOP)
    try:
        ed.lua(
            "require('codecompanion.completion.cmp').new():complete({}, function(r)"
            " out.cmp = r end);"
            "require('codecompanion.completion.blink').new():get_completions({}, function(r)"
            " out.blink = r end)"
        )
        assert ed.lua("return out.cmp == nil and out.blink == nil")
        local = ed.lua("return require('codecompanion.complete').omnifunc(0, '#')")
        assert [item["word"] for item in local] == [
            "#{buffer}",
            "#{buffers}",
            "#{diagnostics}",
            "#{quickfix}",
            "#{selection}",
            "#{terminal}",
            "#{viewport}",
        ]
    finally:
        os.kill(pid, signal.SIGCONT)
    got = wait_for(lambda: ed.lua("return (out.cmp and out.blink) and out or nil"))
    assert "@{read_file}" in {item["label"] for item in got["cmp"]["items"]}
    assert {"#{buffer}", "/file", "/buffer"} <= {item["label"] for item in got["blink"]["items"]}


def test_cmp_source_is_registered_once_with_its_trigger_characters(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.lua(
        "_G.fake_cmp = {registered = 0, buffer = 0, filetype = {}};"
        "package.preload['cmp'] = function() return {"
        " register_source = function(name, src) fake_cmp.registered = fake_cmp.registered + 1;"
        "   fake_cmp.triggers = src:get_trigger_characters() end,"
        " setup = {buffer = function() fake_cmp.buffer = fake_cmp.buffer + 1 end,"
        "   filetype = function(ft, cfg) fake_cmp.filetype[ft] = cfg end},"
        " config = {sources = function(a, b) return vim.list_extend(vim.deepcopy(a), b) end},"
        "} end"
    )
    for _ in range(3):
        ed.open_chat()
    fake = ed.lua("return fake_cmp")
    assert fake["registered"] == 1 and fake["buffer"] == 0
    assert fake["triggers"] == ["@", "#", "/"]
    assert fake["filetype"]["codecompanion"]["sources"][0]["name"] == "codecompanion"


def test_command_line_completes_adapters_and_models(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()

    def complete(line: str) -> list[str]:
        return list(ed.nvim.funcs.getcompletion(line, "cmdline"))

    adapters = wait_for(lambda: complete("CodeCompanionChat adapter=a"))
    assert {"adapter=anthropic", "adapter=azure_openai"} <= set(adapters)
    assert "adapter=openai" in complete("CodeCompanionChat adapter=op")
    assert complete("CodeCompanionChat adapter=openai model=") == [
        "model=gpt-test",
        "model=gpt-4.1",
    ]
    assert "model=claude-sonnet-4-5" in complete("CodeCompanionChat adapter=anthropic model=c")
