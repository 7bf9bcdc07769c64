"""Fuzz: the stream parsers and the edit matcher raise only the project's own errors."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.adapters import ADAPTERS, create_adapter
from codecompanion.adapters.base import (
    AdapterSettings,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from codecompanion.errors import AdapterError, ToolError
from codecompanion.streams.parser import ResponseParser, make_call
from codecompanion.tools.builtin._support.edit_match import locate
from codecompanion.tools.builtin._support.edits import Edit, apply_edits, parse_edits
from codecompanion.tools.model import arguments

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
EVENT_TYPES = (TextDelta, ReasoningDelta, ToolCallEvent, Usage, Finish)
PARSED_BY = sorted({name: None for name in ADAPTERS if name != "copilot"})

# Words the parsers look for, so random documents reach deep into their code.
KEYS = (
    "choices delta message content tool_calls index id type function name arguments "
    "finish_reason usage prompt_tokens total_tokens reasoning_content reasoning content_block "
    "partial_json input text thinking signature stop_reason candidates parts functionCall args "
    "thought thoughtSignature finishReason usageMetadata promptFeedback blockReason done "
    "done_reason error item item_id call_id response output status object eval_count"
).split()
KINDS = (
    "message_start content_block_start content_block_delta content_block_stop message_delta "
    "message_stop text_delta thinking_delta signature_delta input_json_delta tool_use text "
    "thinking error message function_call response response.output_text.delta "
    "response.output_item.added response.function_call_arguments.delta response.output_item.done "
    "response.completed response.failed response.reasoning_text.delta"
).split()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(KINDS),
    st.text(max_size=12),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=6),
    ),
    max_leaves=25,
)


def frame(doc: Any, style: str) -> str:
    text = json.dumps(doc)
    if style == "sse":
        return f"data: {text}\n\n"
    if style == "event":
        return f"event: {doc if isinstance(doc, str) else 'x'}\ndata: {text}\n\n"
    if style == "bare":
        return text + "\n"
    return {"done": "data: [DONE]\n\n", "comment": ": keep-alive\n", "junk": "data: {oops\n"}[style]


bodies = st.lists(
    st.tuples(documents, st.sampled_from(["sse", "event", "bare", "done", "comment", "junk"])),
    max_size=8,
).map(lambda items: "".join(frame(doc, style) for doc, style in items).encode())


def parser_for(name: str) -> ResponseParser:
    settings_ = AdapterSettings(name=name, api_key="k", model="m", url="http://127.0.0.1:9")
    return create_adapter(settings_).new_parser()


def run_parser(name: str, body: bytes, cuts: list[int]) -> None:
    parser = parser_for(name)
    events = []
    last = 0
    for cut in sorted({c % (len(body) + 1) for c in cuts}) + [len(body)]:
        events += parser.feed(body[last:cut])
        last = cut
    events += parser.close()
    assert all(isinstance(event, EVENT_TYPES) for event in events)
    try:
        parser.raise_for_error()
    except AdapterError:
        return
    assert isinstance(events[-1], Finish)
    assert sum(isinstance(event, Finish) for event in events) == 1


@FAST
@given(
    name=st.sampled_from(PARSED_BY),
    body=bodies,
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_parsers_take_any_provider_shaped_stream(name: str, body: bytes, cuts: list[int]) -> None:
    run_parser(name, body, cuts)


@FAST
@given(
    name=st.sampled_from(PARSED_BY),
    body=st.binary(max_size=600),
    cuts=st.lists(st.integers(0, 600), max_size=4),
)
def test_parsers_take_any_bytes(name: str, body: bytes, cuts: list[int]) -> None:
    run_parser(name, body, cuts)


HOSTILE = {
    "nested-sse": b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n",
    "nested-ndjson": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "infinite-index": b'data: {"type": "content_block_start", "index": Infinity, '
    b'"content_block": {}}\n\ndata: {"choices": [{"index": Infinity, "delta": '
    b'{"tool_calls": [{"index": 0}]}}]}\n\n',
}


def hostile_failures() -> list[str]:
    failures = []
    for name in PARSED_BY:
        for label, body in HOSTILE.items():
            try:
                run_parser(name, body, [len(body) // 2])
            except Exception as exc:
                failures.append(f"{name}/{label}: {type(exc).__name__}")
    return failures


def test_parsers_take_hostile_json() -> None:
    assert hostile_failures() == []


@FAST
@given(arguments_=st.one_of(documents, st.text(max_size=60)), name=st.text(max_size=5))
def test_call_arguments_of_any_shape_become_a_call(arguments_: Any, name: str) -> None:
    call = make_call(None, name, arguments_, lambda: "call_1")
    assert isinstance(call.arguments, dict)
    repaired = arguments.resolve(name, call.arguments, call.raw_arguments, {"type": "object"})
    assert repaired.args is not None or repaired.error


# ---- the edit matcher ------------------------------------------------------------------

lines_text = st.lists(
    st.text(alphabet=" \t\r\n(){}[],;:=xyzXYZ_éé日\u00a0\u2028", max_size=12), max_size=12
).map("\n".join)


@st.composite
def edit_cases(draw: st.DrawFn) -> tuple[str, str, str, bool]:
    content = draw(lines_text)
    if content and draw(st.booleans()):
        start = draw(st.integers(0, len(content) - 1))
        end = draw(st.integers(start, len(content)))
        old = content[start:end]
        if draw(st.booleans()):  # the model's copy is slightly off
            old = draw(st.sampled_from([old.strip(), old.replace("\t", "    "), old + " ", old]))
    else:
        old = draw(lines_text)
    return content, old, draw(lines_text), draw(st.booleans())


@FAST
@given(case=edit_cases())
def test_the_matcher_raises_only_edit_errors(case: tuple[str, str, str, bool]) -> None:
    content, old, new, replace_all = case
    try:
        matches = locate(content, old, replace_all)
    except ToolError:
        pass
    else:
        assert matches and (replace_all or len(matches) == 1)
        assert all(0 <= m.start <= m.end <= len(content) for m in matches)
    try:
        result = apply_edits(content, [Edit(old, new, replace_all)])
    except ToolError:
        return
    assert isinstance(result.content, str)
    special = old.strip() in ("^", "$", "<<START>>", "<<END>>") or not content.strip()
    if content.count(old) == 1 and old and not special and not replace_all:
        assert result.content == content.replace(old, new)


@FAST
@given(raw=st.one_of(st.text(max_size=80), documents.map(json.dumps), documents))
def test_edits_argument_of_any_shape_is_parsed_or_refused(raw: Any) -> None:
    try:
        edits = parse_edits(raw)
    except ToolError:
        return
    assert edits and all(isinstance(edit, Edit) for edit in edits)
