"""Token estimates, windows, prices, pruning and compaction, with small hand-written histories."""

from __future__ import annotations

from typing import Any

from codecompanion.adapters.base import AdapterSettings, Usage
from codecompanion.budget import compact, prune
from codecompanion.budget.count import Ledger, estimate_message, estimate_text
from codecompanion.budget.manager import Budget, BudgetOptions
from codecompanion.budget.prices import price_for
from codecompanion.budget.windows import (
    ServerWindows,
    configured_window,
    known_window,
    llama_props_window,
    ollama_show_window,
)
from codecompanion.errors import AdapterError
from codecompanion.messages import Message, MessageStore, ToolCall

FILE = "\n".join(f"line {n}: value = compute({n}, 'x')" for n in range(300))


class Named:
    """The little of an adapter the budget reads."""

    def __init__(self, model: str = "m", **extra: Any) -> None:
        self.name = "scripted"
        self.settings = AdapterSettings(name="scripted", model=model, extra=extra)


def history(turns: int, result: str = FILE) -> MessageStore:
    """`turns` turns, each: a question, one read_file round, an answer."""
    store = MessageStore()
    store.insert_system("You are helpful.", "system_prompt")
    for n in range(turns):
        store.add(Message(role="user", content=f"question {n}"))
        call = ToolCall(f"call_{n}", "read_file", {"filepath": f"f{n}.py"})
        store.add(Message(role="llm", visible=False, tool_calls=[call]))
        store.add(Message(role="tool", content=result, tool_call_id=call.id, tool_name="read_file"))
        store.add(Message(role="llm", content=f"answer {n}"))
    return store


def one_result_per_call(messages: list[Message]) -> bool:
    calls = [c.id for m in messages if m.role == "llm" for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if m.role == "tool"]
    return sorted(calls) == sorted(results) and len(set(results)) == len(results)


# ----- counting ---------------------------------------------------------------------------


def test_estimates_grow_with_text_and_count_code_symbols() -> None:
    assert estimate_text("") == 0
    assert estimate_text("hello world") == 2
    assert estimate_text("f(x) = 1;") > estimate_text("f x 1")
    assert estimate_text(FILE) > 300 * 8
    # Indentation and each digit count (the safe side for tokenizers that split digits).
    assert estimate_text("    return x") == estimate_text("return x") + 1
    assert estimate_text("150") == 3


def test_the_ratio_is_learned_from_usage_and_bounded() -> None:
    ledger = Ledger()
    ledger.sent(1000)
    ledger.observe(1300, 50)
    assert ledger.ratio == 1.3 and ledger.scaled(100) == 130
    assert (ledger.last_input, ledger.last_output) == (1300, 50)
    ledger.sent(100)
    ledger.observe(100_000, 1)  # an absurd report cannot wreck the estimates
    assert ledger.ratio == 4.0


def test_the_next_count_is_the_reported_usage_plus_the_estimate_of_what_came_since() -> None:
    budget = Budget()
    store = history(2)
    budget.sending(list(store), [])
    raw = budget.ledger.last_raw
    answer = store.add(Message(role="llm", content="the answer"))
    budget.observe(Usage(int(raw * 1.2), 10, None), Named(), answer)
    assert budget.measure(list(store), []) == int(raw * 1.2) + 10  # the provider's own count
    question = Message(role="user", content="one more question about the same files")
    store.add(question)
    added = round(estimate_message(question) * 1.2)
    assert budget.measure(list(store), []) == int(raw * 1.2) + 10 + added


def test_a_count_far_above_the_estimate_is_followed_not_capped() -> None:
    # A server whose template adds much (1234 prompt tokens for a short chat): the ratio is
    # bounded, the count the meter shows is the provider's.
    budget = Budget()
    store = history(1)
    budget.sending(list(store), [])
    answer = store.add(Message(role="llm", content="fine"))
    budget.observe(Usage(50 * budget.ledger.last_raw, 56, None), Named(), answer)
    assert budget.ledger.ratio == 4.0
    assert budget.measure(list(store), []) == 50 * budget.ledger.last_raw + 56


# ----- windows and prices -------------------------------------------------------------------


def test_windows_come_from_settings_then_table() -> None:
    assert known_window("gpt-4o-mini") == 128_000
    assert known_window("anthropic/claude-sonnet-4-5") == 200_000
    assert known_window("something-unknown") is None
    assert configured_window({"context_window": 4096}, "m", {}) == 4096
    assert (
        configured_window({"context_windows": {"m": 8192}, "context_window": 4096}, "m", {}) == 8192
    )
    assert configured_window({}, "m", {"m": 2048}) == 2048


def test_server_reported_windows() -> None:
    assert llama_props_window({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert llama_props_window({"error": "no"}) is None
    show = {"model_info": {"qwen2.context_length": 32768}, "parameters": "stop x"}
    assert ollama_show_window(show) == 32768
    assert ollama_show_window({**show, "parameters": "num_ctx 8192\nstop x"}) == 8192
    assert ollama_show_window(show, {"num_ctx": 4096}) == 4096


async def test_the_window_asks_the_server_once_per_model() -> None:
    asked: list[str] = []

    class Probed(Named):
        async def context_window(self, model: str) -> int | None:
            asked.append(model)
            return 4096

    budget = Budget()
    adapter = Probed("local")
    assert await budget.window(adapter) == 4096  # type: ignore[arg-type]
    assert await budget.window(adapter) == 4096  # type: ignore[arg-type]
    assert asked == ["local"]
    assert await budget.window(Named("gpt-4o", context_window=999)) == 999  # type: ignore[arg-type]


async def test_every_chat_of_the_host_takes_what_the_server_said_of_its_window() -> None:
    asked: list[str] = []
    answers: list[int | None | Exception] = [None, AdapterError("cannot connect"), 8192]

    class Probed(Named):
        async def context_window(self, model: str) -> int | None:
            asked.append(model)
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

    servers = ServerWindows()
    # The server says it reports no window: later chats do not ask again (the table is used).
    assert await Budget(servers=servers).window(Probed("gpt-4o")) == 128_000  # type: ignore[arg-type]
    assert await Budget(servers=servers).window(Probed("gpt-4o")) == 128_000  # type: ignore[arg-type]
    assert asked == ["gpt-4o"]
    # A server that could not be reached is asked again by the next chat, not by the same one.
    failed = Budget(servers=servers)
    assert await failed.window(Probed("local")) is None  # type: ignore[arg-type]
    assert await failed.window(Probed("local")) is None  # type: ignore[arg-type]
    assert await Budget(servers=servers).window(Probed("local")) == 8192  # type: ignore[arg-type]
    assert await Budget(servers=servers).window(Probed("local")) == 8192  # type: ignore[arg-type]
    assert asked == ["gpt-4o", "local", "local"]
    servers.clear()  # a reloaded config asks again
    answers.append(4096)
    assert await Budget(servers=servers).window(Probed("local")) == 4096  # type: ignore[arg-type]


def test_prices_table_and_setting() -> None:
    price = price_for("gpt-4o-mini", {}, {})
    assert price is not None and price.cost(1_000_000, 0) == 0.15
    assert price_for("local", {}, {}) is None
    mine = price_for("local", {"price": {"input": 1, "output": 2}}, {})
    assert mine is not None and mine.cost(1000, 1000) == 0.003
    budget = Budget()
    adapter = Named("gpt-4o")
    budget.observe(Usage(1000, 100, 1100), adapter)  # type: ignore[arg-type]
    assert budget.cost is not None and abs(budget.cost - 0.0035) < 1e-12


def test_meter_text_and_fields() -> None:
    budget = Budget()
    adapter = Named("m", context_window=4096)
    budget.observe(Usage(2000, 120, None), adapter)  # type: ignore[arg-type]
    meter = budget.meter(adapter, list(history(1)), [])  # type: ignore[arg-type]
    fields = meter.to_dict()
    assert fields["window"] == 4096 and fields["last_input"] == 2000
    assert fields["last_output"] == 120 and fields["cost"] is None
    assert "/4.1k tokens (" in meter.text() and "last 2.0k in, 120 out" in meter.text()


# ----- pruning ------------------------------------------------------------------------------


def test_pruning_stubs_old_results_and_keeps_the_last_rounds_whole() -> None:
    store = history(4)
    count = prune.prune_oldest(list(store), keep_rounds=2, fits=lambda: False)
    assert count == 2
    sent = prune.as_sent(list(store))
    results = [m for m in sent if m.role == "tool"]
    assert [m.content == FILE for m in results] == [False, False, True, True]
    assert results[0].content is not None
    assert results[0].content.startswith("[Output pruned to save context: read_file(")
    assert '"filepath": "f0.py"' in results[0].content and "300 lines" in results[0].content
    assert one_result_per_call(sent)
    # The store keeps every byte (the saved chat and gO show it).
    assert all(m.content == FILE for m in store if m.role == "tool")


def test_pruning_stops_as_soon_as_it_fits() -> None:
    store = history(4)
    calls = iter([False, True])
    assert prune.prune_oldest(list(store), keep_rounds=1, fits=lambda: next(calls)) == 1


# ----- compaction ----------------------------------------------------------------------------


def test_the_cut_keeps_the_last_turns_and_every_result_with_its_call() -> None:
    store = history(4)
    cut = compact.find_cut(list(store), keep_turns=2)
    assert cut is not None and store[cut.end].content == "question 2"
    compact.apply(store, cut, "they asked about f0 and f1")
    sent = compact.as_sent(list(store))
    assert [m.content for m in sent if m.role == "user"] == ["question 2", "question 3"]
    assert one_result_per_call(sent)
    summary = [m for m in sent if compact.is_summary(m)]
    assert len(summary) == 1 and "they asked about f0 and f1" in (summary[0].content or "")
    # The history keeps everything; the cut is marked.
    assert len([m for m in store if m.role == "user"]) == 4
    assert sum(1 for m in store if m.extra.get("compacted") == 1) == 8
    saved = MessageStore.from_list(store.to_list())
    assert [m.content for m in compact.as_sent(list(saved)) if m.role == "user"] == [
        "question 2",
        "question 3",
    ]


def test_a_cut_never_separates_a_call_from_its_result() -> None:
    store = history(2)
    call = ToolCall("late", "read_file", {"filepath": "x"})
    store.add(Message(role="llm", visible=False, tool_calls=[call]))
    store.add(Message(role="user", content="a tool added this"))
    store.add(Message(role="tool", content="r", tool_call_id="late", tool_name="read_file"))
    cut = compact.find_cut(list(store), keep_turns=1)
    assert cut is not None and store[cut.end].content == "question 1"


def test_a_second_compaction_folds_the_first_summary_in() -> None:
    store = history(4)
    first = compact.find_cut(list(store), keep_turns=2)
    assert first is not None
    compact.apply(store, first, "first summary")
    second = compact.find_cut(list(store), keep_turns=1)
    assert second is not None
    assert "Earlier summary:\nSummary of the earlier" in compact.transcript(
        list(store)[second.start : second.end], 5000
    )
    compact.apply(store, second, "second summary")
    summaries = [m for m in compact.as_sent(list(store)) if compact.is_summary(m)]
    assert [m.tag for m in summaries] == ["compaction:2"]


def test_the_transcript_fits_its_budget_keeping_the_latest() -> None:
    store = history(6)
    text = compact.transcript(list(store), 200)
    assert "answer 5" in text and "question 0" not in text
    assert text.startswith("[…earlier messages left out…]")


# ----- making room ---------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.asked: list[str] = []

    def say(self, line: str) -> None:
        self.lines.append(line)

    async def summarise(self, text: str) -> str:
        self.asked.append(text)
        return "the summary"


async def test_under_the_first_threshold_nothing_changes() -> None:
    store = history(1)
    budget, rec = Budget(), Recorder()
    window = budget.measure(list(store), []) * 2
    assert await budget.make_room(store, [], window, rec.summarise, rec.say) is None
    assert rec.lines == [] and not any(m.extra for m in store)


async def test_past_the_first_threshold_old_results_are_pruned() -> None:
    store = history(4)
    budget, rec = Budget(BudgetOptions(keep_rounds=1)), Recorder()
    size = budget.measure(list(store), [])
    window = int(size / 0.80)  # over 75 %, under 85 %: pruning is enough
    assert await budget.make_room(store, [], window, rec.summarise, rec.say) is None
    assert rec.lines and rec.lines[0].startswith("pruned ")
    assert rec.asked == []
    assert budget.measure(list(store), []) <= 0.75 * window


async def test_past_the_second_threshold_the_chat_is_compacted() -> None:
    store = history(6)
    budget, rec = Budget(BudgetOptions(keep_rounds=6, prune=False)), Recorder()
    window = int(budget.measure(list(store), []) / 0.9)
    assert await budget.make_room(store, [], window, rec.summarise, rec.say) is None
    assert any(line.startswith("compacted ") for line in rec.lines)
    assert rec.asked and "question 0" in rec.asked[0]
    assert budget.measure(list(store), []) < 0.85 * window
    assert one_result_per_call(budget.as_sent(list(store)))


async def test_what_cannot_fit_is_refused_with_one_line() -> None:
    store = MessageStore()
    store.add(Message(role="user", content=FILE * 3))
    budget, rec = Budget(), Recorder()
    problem = await budget.make_room(store, [], 1000, rec.summarise, rec.say)
    assert problem is not None and problem.startswith("not sent: the request needs about")
    assert "\n" not in problem


async def test_forced_compaction_ignores_the_thresholds() -> None:
    store = history(3)
    budget, rec = Budget(), Recorder()
    window = budget.measure(list(store), []) * 10
    assert await budget.make_room(store, [], window, rec.summarise, rec.say, force=True) is None
    assert [m.content for m in budget.as_sent(list(store)) if m.role == "user"] == [
        "question 1",
        "question 2",
    ]


async def test_a_failed_summary_is_said_and_loses_nothing() -> None:
    from codecompanion.errors import ProviderError

    async def broken(text: str) -> str:
        raise ProviderError("the summariser is down")

    store = history(3)
    budget, rec = Budget(), Recorder()
    before = store.to_list()
    await budget.make_room(store, [], 10**6, broken, rec.say, force=True)
    assert rec.lines == ["compaction failed: the summariser is down"]
    assert store.to_list() == before


def test_a_rewind_past_a_compaction_brings_its_messages_back() -> None:
    store = history(4)
    cut = compact.find_cut(list(store), keep_turns=2)
    assert cut is not None
    compact.apply(store, cut, "summary")
    assert [m.content for m in compact.as_sent(list(store)) if m.role == "user"] == [
        "question 2",
        "question 3",
    ]
    summary_at = next(i for i, m in enumerate(store) if compact.is_summary(m))
    store.truncate(summary_at)  # a rewind to before the cut: the summary goes
    assert [m.content for m in compact.as_sent(list(store)) if m.role == "user"] == [
        "question 0",
        "question 1",
    ]
    assert one_result_per_call(compact.as_sent(list(store)))
