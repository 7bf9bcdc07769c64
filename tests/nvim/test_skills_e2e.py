"""Skills on real Neovim with a scripted model: the list goes out, the body only when asked."""

from __future__ import annotations

import json
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.chat import chat_requests
from tests.support.nvim import ProjectNvim, wait_for


def _skill(project: Path, name: str, description: str, body: str) -> None:
    folder = project / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    )


def test_a_skill_body_is_sent_only_after_the_model_asks_for_it(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    _skill(project, "haiku", "Answer in the form of a haiku.", "BODY-MARK: five, seven, five.")
    (project / ".claude/skills/broken").mkdir()
    (project / ".claude/skills/broken/SKILL.md").write_text("no front matter\n")
    provider_server.enqueue(
        openai_tool_calls([("s1", "skill", {"name": "haiku", "file": None})]),
        openai_text("Code flows like water"),
    )
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("write me a poem")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    first, second = chat_requests(provider_server)[:2]
    sent_first = json.dumps(first["messages"])
    assert "- haiku: Answer in the form of a haiku." in sent_first
    assert "BODY-MARK" not in sent_first
    assert "skill" in [t["function"]["name"] for t in first["tools"]]
    tool_message = second["messages"][-1]
    assert (
        tool_message["role"] == "tool"
        and "BODY-MARK: five, seven, five." in tool_message["content"]
    )
    text = ed.text(bufnr)
    assert "> Skills: haiku · skipped .claude/skills/broken: no front matter" in text
    assert "Code flows like water" in text


def test_skills_picker_turns_a_skill_off_for_the_next_request(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    _skill(project, "haiku", "Answer in haiku.", "five seven five")
    _skill(project, "limerick", "Answer in limericks.", "a a b b a")
    provider_server.enqueue(openai_text("one"), openai_text("two"))
    ed = project_nvim()
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    ed.answer("[x] haiku (.claude/skills/haiku)")
    ed.send("/skills")
    prompt = wait_for(lambda: [p for p in ed.prompts() if "Skills" in (p["prompt"] or "")])
    assert prompt[0]["items"] == [
        "[x] haiku (.claude/skills/haiku)",
        "[x] limerick (.claude/skills/limerick)",
    ]
    wait_for(lambda: "skill haiku off" in ed.lua("return vim.fn.execute('messages')"))
    ed.send("again")
    ed.wait_event("CodeCompanionChatDone", count=2)
    sent = json.dumps(chat_requests(provider_server)[-1]["messages"])
    assert "Answer in limericks." in sent and "Answer in haiku." not in sent
    assert "> Skills: limerick" in ed.text(bufnr)


def test_checkhealth_lists_the_skills_found_and_what_was_skipped(
    project_nvim: ProjectNvim, project: Path
) -> None:
    _skill(project, "haiku", "Answer in haiku.", "five seven five")
    (project / ".agents/skills/odd").mkdir(parents=True)
    (project / ".agents/skills/odd/SKILL.md").write_text("---\nname: odd\n---\n")
    ed = project_nvim()
    ed.open_chat()  # the host is up: the health request waits 2 s at most
    ed.wait_event("CodeCompanionChatCreated")
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.nvim.current.buffer[:])
    assert "skills: haiku (.claude/skills/haiku)" in text
    assert "subagents: general (builtin)" in text
    assert "skipped .agents/skills/odd: `description` is missing" in text
