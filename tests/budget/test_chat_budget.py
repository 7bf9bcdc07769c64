"""The budget in the chat's turn loop, with a scripted provider: thresholds, the retry on a
context error, /compact, the meter, and rules files in the system prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codecompanion.adapters.base import Finish, TextDelta, ToolCallEvent, Usage
from codecompanion.budget import compact
from codecompanion.budget.count import estimate_text
from codecompanion.budget.keeper import ContextKeeper
from codecompanion.budget.manager import Budget, BudgetOptions
from codecompanion.chat.chat import Chat
from codecompanion.context.rules import Rules, RulesOptions
from codecompanion.errors import ContextTooLong, ProviderError
from codecompanion.messages import Message, ToolCall
from codecompanion.render_ops import Block, Context, Meter, Ready
from tests.support.chat import EchoTool, RecordingView, ScriptedAdapter, finish, make_chat

FILE = "\n".join(f"line {n}: value = compute({n}, 'x')" for n in range(300))


def answer(text: str, prompt: int | None = None) -> list[object]:
    usage = [Usage(prompt, 5, (prompt or 0) + 5)] if prompt else []
    return [TextDelta(text), *usage, Finish()]


def lines(view: RecordingView) -> list[str]:
    return [op.text for op in view.ops if isinstance(op, Block)]


def meters(view: RecordingView) -> list[dict[str, object]]:
    return [op.wire() for op in view.ops if isinstance(op, Meter)]


def one_result_per_call(messages: list[Message]) -> bool:
    calls = [c.id for m in messages if m.role == "llm" for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if m.role == "tool"]
    return sorted(calls) == sorted(results) and len(set(results)) == len(results)


def with_window(chat: Chat, window: int, **options: object) -> None:
    chat.adapter.settings.extra["context_window"] = window
    chat.context = ContextKeeper(chat, Budget(BudgetOptions(**options)))  # type: ignore[arg-type]


def fill(chat: Chat, turns: int) -> None:
    """Earlier turns, each with one big tool result."""
    for n in range(turns):
        chat.messages.add(Message(role="user", content=f"question {n}"))
        call = ToolCall(f"old_{n}", "echo", {"n": n})
        chat.messages.add(Message(role="llm", visible=False, tool_calls=[call]))
        chat.messages.add(
            Message(role="tool", content=FILE, tool_call_id=call.id, tool_name="echo")
        )
        chat.messages.add(Message(role="llm", content=f"answer {n}"))


async def test_usage_corrects_the_meter_and_status_fields() -> None:
    # The provider counts 25 % more than the raw estimate: the second estimate learns it.
    first_prompt = int(estimate_text(FILE) * 1.25)
    second_prompt = first_prompt + 40
    adapter = ScriptedAdapter(answer("hi", prompt=first_prompt), answer("ok", prompt=second_prompt))
    chat, view = make_chat(adapter)
    with_window(chat, 16384)
    chat.submit(FILE)
    await finish(chat)
    first = meters(view)[-1]
    assert first["last_input"] == first_prompt and first["last_output"] == 5
    assert first["window"] == 16384 and first.get("cost") is None
    chat.submit("and again")
    await finish(chat)
    estimate = chat.context.budget.ledger.last_estimate or 0
    assert abs(estimate - second_prompt) <= 0.05 * second_prompt
    stored = [m for m in chat.messages if m.role == "llm"][-1]
    assert stored.extra["usage"] == {"input": second_prompt, "output": 5, "estimate": estimate}


async def test_past_the_first_threshold_old_results_go_as_stubs() -> None:
    adapter = ScriptedAdapter(answer("done"))
    chat, view = make_chat(adapter)
    fill(chat, 3)
    size = chat.context.meter().tokens
    with_window(chat, int(size / 0.8), keep_rounds=1)
    chat.submit("next")
    await finish(chat)
    # The oldest result is enough to get under 75 %: pruning stops there.
    assert any("pruned 1 old tool result to stubs" in line for line in lines(view))
    sent = adapter.requests[-1]
    results = [m.content or "" for m in sent if m.role == "tool"]
    assert [r.startswith("[Output pruned") for r in results] == [True, False, False]
    assert one_result_per_call(sent)
    assert all(m.content == FILE for m in chat.messages if m.role == "tool")  # kept whole
    assert chat.full_output("old_0") == FILE  # gO still shows all of it


async def test_past_the_second_threshold_the_chat_is_compacted_visibly() -> None:
    adapter = ScriptedAdapter(answer("SUMMARY: files f0-f5"), answer("done"))
    chat, view = make_chat(adapter)
    fill(chat, 6)
    size = chat.context.meter().tokens
    with_window(chat, int(size / 0.95), prune=False)
    chat.submit("next")
    await finish(chat)
    assert any("compacted" in line and "earlier messages" in line for line in lines(view))
    summary_request, sent = adapter.requests
    assert "question 0" in (summary_request[-1].content or "")
    assert [m.content for m in sent if m.role == "user"] == ["question 5", "next"]
    assert any("SUMMARY: files f0-f5" in (m.content or "") for m in sent if m.role == "system")
    assert one_result_per_call(sent)
    state = chat.to_state()
    marked = [m for m in state["messages"] if (m.get("extra") or {}).get("compacted")]
    assert len(marked) == 5 * 4  # every summarised message is kept, marked with its cut
    assert any((m["_meta"].get("tag") or "").startswith("compaction:") for m in state["messages"])


async def test_a_context_error_compacts_and_retries_once_saying_so() -> None:
    refusal = ContextTooLong("the request (5030 tokens) exceeds the context size (4096 tokens)")
    adapter = ScriptedAdapter([refusal], answer("summary"), answer("answered after all"))
    chat, view = make_chat(adapter)
    fill(chat, 3)
    with_window(chat, 10**6)
    chat.submit("next")
    await finish(chat)
    assert any("compacting and retrying once" in line for line in lines(view))
    assert any("compacting and retrying once" in text for text, _ in view.notices)
    assert "answered after all" in "".join(lines(view))
    assert len(adapter.requests) == 3
    assert chat.context.budget.ledger.ratio > 1.0  # the estimates learned they were low


async def test_a_second_context_error_is_the_answer_error() -> None:
    first = ProviderError("The provider refused the request (HTTP 400): maximum context length")
    again = ContextTooLong("still too long")
    adapter = ScriptedAdapter([first], answer("summary"), [again])
    chat, view = make_chat(adapter)
    fill(chat, 2)
    chat.submit("next")
    await finish(chat)
    last = [m for m in chat.messages if m.role == "llm"][-1]
    assert last.extra.get("incomplete") == "still too long"
    assert len(adapter.requests) == 3


async def test_other_errors_are_not_retried() -> None:
    adapter = ScriptedAdapter([ProviderError("The provider failed (HTTP 500): boom")])
    chat, _view = make_chat(adapter)
    chat.submit("hello")
    await finish(chat)
    assert len(adapter.requests) == 1


async def test_a_request_that_cannot_fit_is_never_sent() -> None:
    adapter = ScriptedAdapter()
    chat, _view = make_chat(adapter)
    with_window(chat, 300)
    chat.submit(FILE)
    await finish(chat)
    assert adapter.requests == []
    last = [m for m in chat.messages if m.role == "llm"][-1]
    assert (last.extra.get("incomplete") or "").startswith("not sent: the request needs about")


async def test_compact_on_demand_and_typed_as_a_message() -> None:
    summaries = [answer(f"summary {n}") for n in range(3)]
    adapter = ScriptedAdapter(*summaries)
    chat, view = make_chat(adapter)
    fill(chat, 3)
    assert chat.compact()
    await finish(chat)
    assert any("compacted" in line for line in lines(view))
    assert isinstance(view.ops[-1], Ready)
    assert meters(view)
    sent = chat.context.outgoing()
    assert [m.content for m in sent if m.role == "user"] == ["question 1", "question 2"]
    assert chat.submit("/compact")  # typed: compacts down to the last turn
    await finish(chat)
    assert [m.content for m in chat.context.outgoing() if m.role == "user"] == ["question 2"]
    assert chat.submit("/compact")  # between turns, on demand: the last turn too
    await finish(chat)
    sent = chat.context.outgoing()
    assert [m.content for m in sent if m.role == "user"] == []
    assert any("summary 2" in (m.content or "") for m in sent if m.role == "system")
    assert chat.submit("/compact")  # nothing is left but the summary: says so
    await finish(chat)
    assert ("nothing to compact: only the current turn is left", "info") in view.notices
    assert len(adapter.requests) == 3


async def test_a_summary_no_shorter_than_the_conversation_is_not_applied() -> None:
    adapter = ScriptedAdapter(answer("hi"), answer("a summary far longer than the chat " * 40))
    chat, view = make_chat(adapter)
    chat.submit("hello")
    await finish(chat)
    before = [m.content for m in chat.context.outgoing()]
    size = chat.context.meter().tokens
    assert chat.submit("/compact")
    await finish(chat)
    assert [m.content for m in chat.context.outgoing()] == before  # sent as it was
    assert not any(compact.is_summary(m) for m in chat.messages)
    said = [text for text, _level in view.notices if text.startswith("nothing compacted")]
    assert said and f"({size} → " in said[0] and "would not be shorter" in said[0]
    assert meters(view)[-1]["tokens"] == size


async def test_a_context_error_mid_turn_keeps_the_current_turn() -> None:
    refusal = ContextTooLong("too long")
    adapter = ScriptedAdapter([refusal], answer("summary"), answer("ok"))
    chat, _view = make_chat(adapter)
    fill(chat, 1)
    chat.submit("the current question")
    await finish(chat)
    sent = adapter.requests[-1]
    assert [m.content for m in sent if m.role == "user"] == ["the current question"]


async def test_tool_rounds_keep_exactly_once_under_pruning() -> None:
    calls = [ToolCall(f"c{n}", "echo", {"n": n}) for n in range(4)]
    scripts = [[ToolCallEvent(call), Finish("tool_calls")] for call in calls]
    adapter = ScriptedAdapter(*scripts, answer("done"))
    chat, _view = make_chat(adapter)
    fill(chat, 2)
    with_window(chat, int(chat.context.meter().tokens / 0.8), keep_rounds=1)
    chat.submit("go")
    await finish(chat)
    for sent in adapter.requests:
        assert one_result_per_call(sent)


async def test_rules_files_load_show_one_line_and_follow_the_disk(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    (project / "AGENTS.md").write_text("Always answer in French.\n")
    (project / "src" / "AGENTS.md").write_text("src: prefer dataclasses.\n")
    call = ToolCall("r1", "echo", {"filepath": "src/x.py"})
    adapter = ScriptedAdapter(
        [ToolCallEvent(call), Finish("tool_calls")], answer("oui"), answer("encore")
    )
    chat, view = make_chat(adapter)
    rules = Rules(project, RulesOptions(user_files=()))
    chat.context = ContextKeeper(chat, Budget(), rules)
    chat.submit("hello")
    await finish(chat)
    first, second = adapter.requests[0], adapter.requests[1]
    assert any("Always answer in French." in (m.content or "") for m in first if m.role == "system")
    assert not any("prefer dataclasses" in (m.content or "") for m in first)
    # After the read in src/, the next request carries src/AGENTS.md.
    assert any("prefer dataclasses" in (m.content or "") for m in second if m.role == "system")
    shown = [op for op in view.ops if isinstance(op, Context)]
    assert [op.title for op in shown] == ["> Rules: AGENTS.md", "> Rules: AGENTS.md, src/AGENTS.md"]
    assert "Always answer in French." in (shown[0].text or "")  # folded under the line
    (project / "AGENTS.md").write_text("Always answer in German.\n")
    chat.submit("again")
    await finish(chat)
    third = adapter.requests[2]
    assert any("German" in (m.content or "") for m in third if m.role == "system")
    assert not any("French" in (m.content or "") for m in third)
    assert sum(1 for m in chat.messages if m.tag == "rules") == 1
    assert "AGENTS.md off" in chat.context.toggle_rule("AGENTS.md")
    assert ("AGENTS.md", False) in chat.context.rule_files()


async def test_clearing_forgets_summaries_and_resets_the_meter() -> None:
    adapter = ScriptedAdapter(answer("the summary"), answer("ok", prompt=100))
    chat, view = make_chat(adapter)
    fill(chat, 3)
    chat.compact()
    await finish(chat)
    chat.clear()
    assert not any(m.tag and m.tag.startswith("compaction:") for m in chat.messages)
    last = meters(view)[-1]
    assert last.get("last_input") is None and last.get("cost") is None


async def test_a_reload_changes_thresholds_and_rules_lists_but_keeps_the_counts(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("agents\n")
    (tmp_path / "CLAUDE.md").write_text("claude\n")
    adapter = ScriptedAdapter(answer("one", prompt=100), answer("two", prompt=120))
    chat, _view = make_chat(adapter)
    chat.context = ContextKeeper(chat, Budget(), Rules(tmp_path, RulesOptions(user_files=())))
    chat.submit("hello")
    await finish(chat)
    chat.context.configure({"prune_at": 0.5}, {"files": ["CLAUDE.md"], "user_files": []})
    assert chat.context.budget.options.prune_at == 0.5
    assert chat.context.budget.ledger.last_input == 100
    chat.submit("again")
    await finish(chat)
    sent = " ".join(m.content or "" for m in adapter.requests[-1] if m.role == "system")
    assert "claude" in sent and "agents" not in sent


class MarkingAdapter(ScriptedAdapter):
    """A scripted provider that notes how many render ops the view held at each request."""

    def __init__(self, view_ops: list[object], *scripts: list[object]) -> None:
        super().__init__(*scripts)
        self.view_ops = view_ops
        self.marks: list[int] = []

    def stream(self, messages, tools):  # type: ignore[no-untyped-def]
        self.marks.append(len(self.view_ops))
        return super().stream(messages, tools)


def tool_call_answer(prompt: int) -> list[object]:
    call = ToolCall("call_1", "echo", {"n": 1})
    return [ToolCallEvent(call), Usage(prompt, 5, prompt + 5), Finish("tool_calls")]


async def test_the_meter_after_an_answer_with_calls_shows_when_the_rounds_request_leaves() -> None:
    chat, view = make_chat(None)
    adapter = MarkingAdapter(view.ops, tool_call_answer(900), answer("done", prompt=1200))
    chat.adapter = adapter  # type: ignore[assignment]
    with_window(chat, 16384)
    chat.submit("use echo")
    await finish(chat)
    first, second = adapter.marks
    between = [op for op in view.ops[first:second] if isinstance(op, Meter)]
    assert between == []  # nothing counted between the answer and the tool round's request
    shown = [op.wire() for op in view.ops[second:] if isinstance(op, Meter)]
    assert shown[0]["last_input"] == 900
    final = [m for m in chat.messages if m.role == "llm"][-1]
    assert shown[0]["tokens"] == final.extra["usage"]["estimate"]  # the request's own count
    assert shown[-1]["last_input"] == 1200


async def test_a_held_meter_shows_while_the_tool_round_waits() -> None:
    adapter = ScriptedAdapter(tool_call_answer(900), answer("done", prompt=1200))
    echo = EchoTool()
    chat, view = make_chat(adapter, tools=echo)
    with_window(chat, 16384)
    echo.gate.clear()  # the round waits (as for the user's approval)
    chat.submit("use echo")
    for _ in range(100):
        await asyncio.sleep(0.01)
        if any(m["last_input"] == 900 for m in meters(view)):
            break
    assert any(m["last_input"] == 900 for m in meters(view))
    assert len(adapter.requests) == 1  # shown before the round's request
    echo.gate.set()
    await finish(chat)
    assert meters(view)[-1]["last_input"] == 1200
