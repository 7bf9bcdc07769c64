"""Rules files, the context meter and /compact in a real Neovim with the stock UI."""

from __future__ import annotations

import json
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.chat import chat_requests
from tests.support.nvim import Editor, ProjectNvim, wait_for


def drawn_winbar(ed: Editor, bufnr: int) -> str:
    """The chat window's winbar as Neovim draws it."""
    return str(
        ed.lua(
            "local win = vim.fn.bufwinid(...) return vim.api.nvim_eval_statusline("
            "vim.wo[win].winbar, {winid = win, use_winbar = true}).str",
            bufnr,
        )
    )


def test_rules_line_meter_and_compact_on_screen(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    (project / "AGENTS.md").write_text("Answer in haiku.\n")
    provider_server.enqueue(
        openai_text("first answer, a long one " * 40),
        openai_text("second answer"),
        openai_text("the summary"),
    )
    ed = project_nvim("adapters['openai']['context_window'] = 4096\n")
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    lines = ed.lines(bufnr)
    row = next(i for i, line in enumerate(lines, 1) if line.startswith("> Rules: AGENTS.md"))
    # One folded line: the rules text the model reads is under it.
    assert ed.lua("return vim.fn.foldclosed(...)", row) == row
    assert "Answer in haiku." in "\n".join(lines)
    sent = chat_requests(provider_server)[-1]["messages"]
    assert any("Answer in haiku." in (m.get("content") or "") for m in sent)
    winbar = wait_for(lambda: "last 10 in" in drawn_winbar(ed, bufnr) and drawn_winbar(ed, bufnr))
    assert "/4.1k tokens (" in winbar
    info = ed.lua("return require('codecompanion').status_info(...)", bufnr)
    assert info["window"] == 4096 and info["last_input"] == 10 and info["tokens"] > 0
    assert "% of 4k" in ed.lua("return require('codecompanion').status(...)", bufnr)

    ed.send("again")
    ed.wait_event("CodeCompanionChatDone", count=2)
    ed.send("/compact")
    wait_for(lambda: "_[context: compacted" in ed.text(bufnr))
    summary_request = chat_requests(provider_server)[-1]["messages"]
    assert "hello" in summary_request[-1]["content"]

    def saved_tags() -> list[str]:
        chats = tmp_path / "data" / "nvim" / "codecompanion" / "chats"
        saved = [json.loads(p.read_text()) for p in chats.glob("*.json")]
        messages = [m for chat in saved for m in chat.get("messages") or []]
        return [m["_meta"].get("tag") or "" for m in messages]

    wait_for(lambda: any(tag.startswith("compaction:") for tag in saved_tags()))


def test_rules_picker_turns_a_file_off_for_the_next_request(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Answer in haiku.\n")
    (project / "CLAUDE.md").write_text("Be brief.\n")
    provider_server.enqueue(openai_text("one"), openai_text("two"))
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    ed.answer("[x] AGENTS.md")
    ed.send("/rules")
    prompt = wait_for(lambda: [p for p in ed.prompts() if "Rules files" in (p["prompt"] or "")])
    assert prompt[0]["items"] == ["[x] AGENTS.md", "[x] CLAUDE.md"]
    wait_for(lambda: "AGENTS.md off" in ed.lua("return vim.fn.execute('messages')"))
    ed.send("again")
    ed.wait_event("CodeCompanionChatDone", count=2)
    sent = json.dumps(chat_requests(provider_server)[-1]["messages"])
    assert "Be brief." in sent and "Answer in haiku." not in sent
    assert "> Rules: CLAUDE.md" in ed.text(bufnr)


def test_compact_on_a_short_chat_changes_nothing_and_leaves_one_header(
    project_nvim: ProjectNvim, provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("first answer"), openai_text("a longer summary " * 30))
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    ed.send("/compact")
    wait_for(
        lambda: "would not be shorter" in ed.text(bufnr) and ed.lua("return vim.bo.modifiable")
    )
    lines = ed.lines(bufnr)
    # The line saying why sits above the one `## Me`, which still waits at the end.
    assert [line for line in lines if line.startswith("## Me")] == ["## Me", "## Me"]
    end = len(lines) - 1 - lines[::-1].index("## Me")
    assert lines[end - 2].startswith("_[context: nothing compacted: a summary of 2 messages")
    assert all(line == "" for line in lines[end + 1 :])
