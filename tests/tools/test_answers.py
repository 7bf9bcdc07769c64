"""`BatchResults`: the one place that keeps "each call id gets exactly one result"."""

from __future__ import annotations

from codecompanion.messages import ToolCall, ToolResult
from codecompanion.tools.runtime.protocol import BatchResults

CALLS = [ToolCall("a", "t", {}), ToolCall("b", "t", {}), ToolCall("c", "t", {})]


def answers() -> tuple[BatchResults, list[tuple[str, str]]]:
    delivered: list[tuple[str, str]] = []
    return BatchResults(CALLS, lambda call, r: delivered.append((call.id, r.for_llm))), delivered


def test_the_first_result_is_delivered_and_a_second_refused() -> None:
    book, delivered = answers()
    assert book.record(CALLS[1], ToolResult("success", "first"))
    assert not book.record(CALLS[1], ToolResult("error", "second"))
    assert delivered == [("b", "first")]
    assert book.statuses == {"b": "success"}
    assert book.has("b") and not book.has("a")


def test_answer_rest_answers_only_the_calls_without_a_result_in_order() -> None:
    book, delivered = answers()
    book.record(CALLS[1], ToolResult("success", "ran"))
    book.answer_rest(lambda call: ToolResult("cancelled", f"{call.id} cancelled"))
    assert delivered == [("b", "ran"), ("a", "a cancelled"), ("c", "c cancelled")]
    assert book.statuses == {"b": "success", "a": "cancelled", "c": "cancelled"}
    book.answer_rest(lambda call: ToolResult("error", "again"))
    assert len(delivered) == 3
