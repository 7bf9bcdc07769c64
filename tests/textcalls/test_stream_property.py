"""Whatever the answer and however it is split, the scanner loses nothing and invents nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codecompanion.textcalls.stream import CallScanner, FoundCalls, Piece, ShownText
from tests.support.textcalls import CATALOG

PARTS = [
    "Some prose.\n",
    "inline `code` and <b>tags</b>\n",
    "\n",
    "   ",
    '```json\n{"name": "calculator", "arguments": '
    '{"num1": 1, "num2": 2, "operation": "add"}}\n```\n',
    '```json\n{"name": "calculator", "arguments": {"num1": "x"}}\n```\n',
    "```xml\n<tool><name>read_file</name><parameters><path>a</path></parameters></tool>\n```\n",
    "```python\nprint('```')\n```\n",
    "````markdown\n```json\n{}\n```\n````\n",
    '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>\n',
    "<tool>\n<name>calculator</name>\n",
    "</tool>\n",
    "```\n",
    "~~~\n",
    '{"name": "read_file", "arguments": {"path": "c"}}',
    "[1, 2]",
    "<tools>",
]


def pieces_of(text: str, cuts: list[int], policy: str) -> list[Piece]:
    scanner = CallScanner(CATALOG, policy)  # type: ignore[arg-type]
    out: list[Piece] = []
    last = 0
    for cut in sorted({c % (len(text) + 1) for c in cuts}) + [len(text)]:
        out += scanner.feed(text[last:cut])
        last = cut
    return out + scanner.close()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PARTS), max_size=8),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    st.sampled_from(["prompt", "recover"]),
)
def test_shown_text_and_call_blocks_rebuild_the_answer(
    parts: list[str], cuts: list[int], policy: str
) -> None:
    text = "".join(parts)
    pieces = pieces_of(text, cuts, policy)
    rebuilt = "".join(p.text if isinstance(p, ShownText) else p.raw for p in pieces)
    assert rebuilt == text
    for piece in pieces:
        if isinstance(piece, FoundCalls):
            assert piece.calls
            if policy == "recover":
                assert all(CATALOG.validate(c.name, c.arguments) is None for c in piece.calls)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PARTS), max_size=8), st.sampled_from(["prompt", "recover"]))
def test_the_split_does_not_change_what_is_found(parts: list[str], policy: str) -> None:
    text = "".join(parts)
    whole = pieces_of(text, [], policy)
    bytewise = pieces_of(text, list(range(len(text))), policy)
    names = [[c.name for c in p.calls] for p in whole if isinstance(p, FoundCalls)]
    assert names == [[c.name for c in p.calls] for p in bytewise if isinstance(p, FoundCalls)]
