"""The hooks around a turn: SessionStart and UserPromptSubmit add context or block the prompt,
a Stop hook sends the model back to work (a few times at most)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codecompanion.adapters.base import Finish, TextDelta
from codecompanion.hooks import ChatHooks, read_table
from codecompanion.hooks.run import Where
from tests.support.chat import ScriptedAdapter, finish, make_chat


def _hooked_chat(
    tmp_path: Path, hooks: dict[str, Any], *answers: str
) -> tuple[Any, Any, list[str]]:
    adapter = ScriptedAdapter(*([TextDelta(text), Finish()] for text in answers))
    chat, _view = make_chat(adapter)
    lines: list[str] = []
    table = read_table(hooks, "hooks")
    chat.tools.hooks = ChatHooks(table, lambda: Where(tmp_path, {"PATH": "/usr/bin:/bin"}))
    chat.tools.hooks.say = lines.append
    return chat, adapter, lines


def _contents(messages: Any) -> list[str]:
    return [str(m.content) for m in messages]


async def test_session_start_and_prompt_hooks_add_context_once_and_each_turn(
    tmp_path: Path,
) -> None:
    hooks = {
        "SessionStart": ["echo the branch is main"],
        "UserPromptSubmit": [lambda event: f"asked: {event['prompt']}"],
    }
    chat, adapter, _lines = _hooked_chat(tmp_path, hooks, "one", "two")
    chat.submit("first")
    await finish(chat)
    chat.submit("second")
    await finish(chat)
    first, second = (_contents(request) for request in adapter.requests)
    assert "the branch is main" in first and first[-1] == "first\n\nasked: first"
    assert second.count("the branch is main") == 1 and second[-1] == "second\n\nasked: second"


async def test_session_start_runs_again_after_a_clear_and_replaces_what_it_said(
    tmp_path: Path,
) -> None:
    sources: list[str] = []

    def started(event: dict[str, Any]) -> str:
        sources.append(event["source"])
        return f"session {len(sources)} ({event['source']})"

    chat, adapter, _lines = _hooked_chat(tmp_path, {"SessionStart": [started]}, *"abc")
    for text in ("first", "second"):
        chat.submit(text)
        await finish(chat)
    chat.clear()
    chat.submit("after the clear")
    await finish(chat)
    assert sources == ["startup", "clear"]
    last = "\n".join(_contents(adapter.requests[-1]))
    assert "session 2 (clear)" in last and "session 1" not in last
    assert "first" not in last


async def test_a_prompt_hook_that_blocks_keeps_the_prompt_from_the_model(tmp_path: Path) -> None:
    hooks = {"UserPromptSubmit": ["echo 'no secrets in prompts' >&2; exit 2"]}
    chat, adapter, lines = _hooked_chat(tmp_path, hooks, "never")
    chat.submit("my password is hunter2")
    await finish(chat)
    assert adapter.requests == []
    assert not any("hunter2" in (m.content or "") for m in chat.messages)
    assert lines == [
        "hook `echo 'no secrets in prompts' >&2; exit 2` blocked UserPromptSubmit: "
        "no secrets in prompts"
    ]


async def test_a_stop_hook_sends_the_model_back_a_few_times_at_most(tmp_path: Path) -> None:
    seen: list[bool] = []

    def not_yet(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event["stop_hook_active"])
        return {"decision": "block", "reason": "run the tests first"}

    chat, adapter, _lines = _hooked_chat(tmp_path, {"Stop": [not_yet]}, *"abcdef")
    chat.submit("fix it")
    await finish(chat)
    assert len(adapter.requests) == 4  # the answer, then three times sent back
    assert seen == [False, True, True, True]
    last = _contents(adapter.requests[-1])
    assert last[-1] == "A Stop hook asks you to go on before you finish: run the tests first"


async def test_pre_compact_hooks_see_slash_compact_coming(tmp_path: Path) -> None:
    seen: list[str] = []
    hooks = {"PreCompact": [lambda event: seen.append(event["trigger"])]}
    chat, _adapter, _lines = _hooked_chat(tmp_path, hooks, "one", "two", "the summary")
    for text in ("first", "second"):
        chat.submit(text)
        await finish(chat)
    assert chat.compact()
    await finish(chat)
    assert seen == ["manual"]
