"""Editor context variables (#{selection} ... #{terminal}) and slash commands (/now, /help,
/symbols, /file, /fetch) on a real Neovim, with what the model is sent."""

from __future__ import annotations

import http.server
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.http_serve import serve
from tests.support.nvim import Editor, ProjectNvim, wait_for

StartNvim = Callable[..., Editor]


def sent(server: LoopbackServer, index: int = 0) -> str:
    return str(server.requests[index].json()["messages"][-1]["content"])


def test_editor_variables_are_read_when_the_message_is_sent(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n\nprint(add(1, 2))\n")
    (project / "notes.txt").write_text("alpha\nbeta\n")
    (project / "later.md").write_text("# not loaded yet\n")
    provider_server.enqueue(openai_text("Seen."))
    ed = project_nvim()
    ed.nvim.command("edit notes.txt")
    ed.nvim.command("badd later.md")  # listed, not loaded: read from its file
    ed.nvim.command("terminal printf 'term-out-1\\nterm-out-2\\n'")
    wait_for(lambda: "term-out-2" in ed.text(0))
    ed.nvim.command("edit calc.py")
    ed.nvim.input("2GVj<Esc>")  # select lines 2-3
    wait_for(lambda: ed.nvim.api.buf_get_mark(0, ">")[0] == 3)
    ed.lua(
        "local ns = vim.api.nvim_create_namespace('t');"
        "vim.diagnostic.set(ns, 0, {{lnum = 1, col = 4, severity = 1, source = 'lint',"
        " message = 'subtracts instead of adding'}})"
    )
    ed.nvim.command(
        "call setqflist([], ' ', {'title': 'make', 'items':"
        " [{'filename': 'calc.py', 'lnum': 4, 'text': 'boom here'}]})"
    )
    bufnr = ed.open_chat()
    ed.send("look: #{selection} #{diagnostics} #{viewport} #{quickfix} #{buffers} #{terminal}")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = sent(provider_server)
    assert "#{" not in text.split("\n\n")[0]
    # selection: the lines under their own numbers
    assert "selection `calc.py:2-3`" in text and "2:     return a - b" in text
    assert "1: def add" not in text.split("Content of the selection")[1].split("```")[1]
    assert "2:5 ERROR lint: subtracts instead of adding" in text
    assert "calc.py lines 1-4 (python):" in text  # the viewport of the source window
    assert "calc.py:4:0: boom here" in text
    # #{buffers}: every open file buffer's content, each named where the mention was
    assert "the buffers `notes.txt`, `later.md`, `calc.py` (below)" in text
    assert "1: # not loaded yet" in text
    assert "Content of the buffer `notes.txt` (filetype text)" in text and "2: beta" in text
    assert "Content of the buffer `calc.py` (filetype python)" in text
    assert "Content of the buffer `term:" not in text  # a terminal is not a buffer to share
    assert "term-out-1" in text and "term-out-2" in text
    # In the chat, one folded line each; saved with the chat.
    lines = ed.lines(bufnr)
    for title in ("> selection `calc.py:2-3` (2 lines)", "> terminal `", "> quickfix list `make`"):
        assert any(line.startswith(title) for line in lines), title


def test_a_variable_with_nothing_to_read_says_so_in_one_line(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("Ok."))
    ed = start_nvim(config_file=config_file(""))
    ed.open_chat()
    ed.send("what about #{quickfix}")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    messages = str(ed.lua("return vim.api.nvim_exec2('messages', {output = true}).output"))
    assert "#{quickfix}: the quickfix list is empty" in messages


def test_typed_slash_commands_run_and_the_message_is_sent(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "mod.lua").write_text(
        "local M = {}\n\nfunction M.alpha(x)\n  local y = x\n  return y\nend\n\n"
        "function M.beta()\nend\n\nreturn M\n"
    )
    (project / "data.txt").write_text("one\ntwo\n")
    provider_server.enqueue(openai_text("Done."))
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("/symbols mod.lua\n/file data.txt\n/help codecompanion-events\nwhen? /now\n/now")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = sent(provider_server)
    assert "Content of the outline `mod.lua`" in text
    assert "3: function M.alpha(x)" in text and "8: function M.beta()" in text
    assert "local y = x" not in text  # an outline, not the file
    assert "Content of the file `data.txt`" in text and "1: one" in text
    assert "Content of the help `codecompanion-events`" in text and "User" in text
    first = text.split("\n\n")[0]
    assert first.startswith("when? /now\n") and "/symbols" not in first  # /now alone on its line
    assert first.splitlines()[1][:3] in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    assert "/file" not in "\n".join(ed.lines(bufnr))  # the chat shows what was sent


def test_symbols_without_a_parser_finds_definitions_by_their_keywords(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    # Stock Neovim has no Python parser: the outline comes from the definition keywords.
    (project / "calc.py").write_text(
        "import os\n\n\nclass Calc:\n    def add(self, a, b):\n        return a + b\n\n"
        "    async def wait(self):\n        pass\n\n# def not_this()\n"
        "def main():\n    print(Calc().add(1, 2))\n"
    )
    provider_server.enqueue(openai_text("Done."))
    ed = project_nvim()
    ed.open_chat()
    ed.send("/symbols calc.py\nwhat is in it?")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = sent(provider_server)
    assert "Content of the outline `calc.py`" in text
    outline = text.split("Content of the outline")[1]
    assert "4: class Calc:" in outline and "  5: def add(self, a, b):" in outline
    assert "  8: async def wait(self):" in outline and "12: def main():" in outline
    assert "not_this" not in outline and "return a + b" not in outline
    messages = str(ed.lua("return vim.fn.execute('messages')"))
    assert "no Tree-sitter parser for calc.py" in messages and "by their keywords" in messages


def test_slash_command_that_asks_keeps_the_message_waiting(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.lua("table.insert(_G.cc_test.inputs, 'codecompanion-events')")
    ed.send("/help\nexplain")
    wait_for(
        lambda: (
            ed.lua(
                "local n = 0 for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, 0, -1,"
                " {details = true})) do n = n + #(m[4].virt_lines or {}) end return n"
            )
            == 1
        )
    )
    assert ed.lines(bufnr)[-1] == "explain"
    assert not provider_server.requests


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", "http://localhost:1/elsewhere")
            self.end_headers()
            return
        body = b"<html><body><h1>Slash page</h1><p>fetched text</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_slash_fetch_adds_the_page_and_asks_before_another_site(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("Read."))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    with serve(_Pages) as base:
        ed.lua("require('codecompanion.slash').run(...)", bufnr, "fetch", base + "page")
        pending = (
            "local n = 0 for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, 0, -1,"
            " {details = true})) do n = n + #(m[4].virt_lines or {}) end return n"
        )
        wait_for(lambda: ed.lua(pending) == 1, timeout=20)
        ed.answer("No")
        ed.lua("require('codecompanion.slash').run(...)", bufnr, "fetch", base + "away")
        wait_for(lambda: any("another site" in str(p["prompt"]) for p in ed.prompts()))
        messages = "return vim.api.nvim_exec2('messages', {output = true}).output"
        wait_for(lambda: "did not approve" in str(ed.lua(messages)))
    ed.send("summarise")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = sent(provider_server)
    assert f"Content of the web page `{base}page`" in text and "# Slash page" in text
    assert "fetched text" in text


def test_slash_image_sends_an_image_part_or_says_the_adapter_takes_none(
    project_nvim: ProjectNvim,
    start_nvim: StartNvim,
    provider_server: LoopbackServer,
    project: Path,
    tmp_path: Path,
) -> None:
    import base64

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    (project / "dot.png").write_bytes(png)
    provider_server.enqueue(openai_text("A dot."))
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("/image dot.png\nwhat is it?")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    content = provider_server.requests[0].json()["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "what is it?"}
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert "> image `dot.png`" in ed.lines(bufnr)
    # An adapter whose model takes no images: one line, nothing sent.
    url = f"{provider_server.url}/v1"
    deepseek = tmp_path / "deepseek.py"
    settings = {"deepseek": {"url": url, "api_key": "k"}}
    deepseek.write_text(f"adapter = 'deepseek'\nadapters = {settings!r}\n")
    ed2 = start_nvim(config_file=deepseek, cwd=project)
    ed2.open_chat()
    ed2.send("/image dot.png\nwhat is it?")
    history = "return vim.api.nvim_exec2('messages', {output = true}).output"
    wait_for(lambda: "the deepseek adapter sends no images" in str(ed2.lua(history)))
    assert len(provider_server.requests) == 1
