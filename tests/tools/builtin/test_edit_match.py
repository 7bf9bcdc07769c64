"""The edit matcher: each stage of the chain, ambiguity, no match, and a Hypothesis fuzz."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.errors import ToolError
from codecompanion.tools.builtin._support.edit_match import EditError, locate, squash
from codecompanion.tools.builtin._support.edits import Edit, apply_edits, parse_edits

CODE = """class Box:
    def __init__(self, size):
        self.size = size

    def grow(self, by):
        self.size = self.size + by
        return self.size
"""


def test_exact_substring_inside_a_line() -> None:
    (match,) = locate(CODE, "size + by")
    assert match.strategy == "exact"
    assert match.line == 6
    assert CODE[match.start : match.end] == "size + by"


def test_line_trimmed_ignores_trailing_whitespace() -> None:
    (match,) = locate(CODE, "    def grow(self, by):   \n        self.size = self.size + by  ")
    assert match.strategy == "line-trimmed"
    assert match.line == 5


def test_whitespace_normalised_keeps_indentation_but_not_inner_spacing() -> None:
    (match,) = locate(CODE, "    def grow( self,by ):\n        self.size  =  self.size + by")
    assert match.strategy == "whitespace-normalised"
    assert match.line == 5


def test_indentation_insensitive() -> None:
    (match,) = locate(CODE, "def grow(self, by):\n    self.size = self.size + by")
    assert match.strategy == "indentation-insensitive"
    assert match.line == 5


def test_fuzzy_needs_one_clear_winner() -> None:
    (match,) = locate(CODE, "    def grow(self, by):\n        self.size = self.sise + by\n")
    assert match.strategy == "fuzzy"
    assert match.line == 5
    assert 0.92 <= match.score < 1


def test_fuzzy_rejects_invented_lines() -> None:
    with pytest.raises(EditError, match="not found"):
        locate(CODE, "    def grow(self, by):\n        self.size = self.size + by\n        pass")


def test_short_text_is_never_fuzzy() -> None:
    with pytest.raises(EditError, match="not found"):
        locate(CODE, "self.sise")


def test_ambiguous_lists_every_line() -> None:
    with pytest.raises(EditError) as caught:
        locate(CODE, "self.size")
    assert "matches 2 places" in str(caught.value) or "places" in str(caught.value)
    assert "lines 3, 6" in str(caught.value)


def test_ambiguous_overlapping_occurrences() -> None:
    with pytest.raises(EditError, match="2 places"):
        locate("aaa", "aa")


def test_ambiguous_fuzzy_blocks() -> None:
    block = "def handler(event):\n    process(event.payload)\n    return None\n"
    content = block + "\n" + block
    with pytest.raises(EditError, match="lines 1, 5"):
        locate(content, "def handler(event):\n    process(event.paylod)\n    return None")


def test_replace_all_takes_every_occurrence() -> None:
    matches = locate(CODE, "self.size", replace_all=True)
    assert [m.line for m in matches] == [3, 6, 6, 7]


def test_no_match_quotes_the_closest_text_with_line_number() -> None:
    with pytest.raises(EditError) as caught:
        locate(CODE, "def shrink(self, by):\n    self.size = self.size - by")
    message = str(caught.value)
    assert "not found" in message
    assert "5:     def grow(self, by):" in message


def test_edit_error_is_a_tool_error() -> None:
    assert issubclass(EditError, ToolError)


def test_squash() -> None:
    assert squash("  foo( a ,  b )  ;") == "foo(a,b);"


def test_apply_whole_line_deletion_removes_the_line() -> None:
    result = apply_edits(CODE, [Edit("        return self.size  \n", "")])
    assert "return self.size" not in result.content
    assert result.content.endswith("self.size + by\n")


def test_apply_reindents_indentation_insensitive_edits() -> None:
    edit = Edit(
        "def grow(self, by):\n    self.size = self.size + by", "def grow(self, by):\n    pass"
    )
    result = apply_edits(CODE, [edit])
    assert "    def grow(self, by):\n        pass\n        return self.size" in result.content


def test_apply_keeps_surrounding_newlines_of_line_matches() -> None:
    edit = Edit("\n    def grow(self, by):  \n", "\n    def grow(self, by, twice):\n")
    result = apply_edits(CODE, [edit])
    assert "    def grow(self, by, twice):\n        self.size" in result.content
    assert "self.size = size\n\n    def grow" in result.content


def test_parse_edits_accepts_a_single_object_and_double_encoded_json() -> None:
    assert parse_edits({"oldText": "a", "newText": "b"}) == [Edit("a", "b")]
    text = '"[{\\"oldText\\": \\"a\\", \\"newText\\": \\"b\\", \\"replaceAll\\": true}]"'
    assert parse_edits(text) == [Edit("a", "b", True)]


def test_parse_edits_normalises_crlf() -> None:
    assert parse_edits([{"oldText": "a\r\nb", "newText": "c\r\n"}]) == [Edit("a\nb", "c\n")]


_TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n(){}x=_1")), max_size=80)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=_TEXT, old=_TEXT, new=_TEXT, replace_all=st.booleans())
def test_fuzz_apply_raises_only_edit_errors(
    content: str, old: str, new: str, replace_all: bool
) -> None:
    try:
        result = apply_edits(content, [Edit(old, new, replace_all)])
    except EditError:
        return
    assert len(result.applied) == 1
    if result.applied[0].strategy == "exact":
        # An exact match is a plain replacement: of every place, or of the one place there is.
        assert result.content == content.replace(old, new, -1 if replace_all else 1)


@settings(max_examples=200, deadline=None)
@given(content=st.text(max_size=200), old=st.text(max_size=60), new=st.text(max_size=60))
def test_fuzz_any_unicode_text(content: str, old: str, new: str) -> None:
    # Any text either fails with a clear EditError or gives text holding the new text.
    try:
        result = apply_edits(content, [Edit(old, new)])
    except EditError as exc:
        assert str(exc).strip()
        return
    assert new in result.content


@settings(max_examples=200, deadline=None)
@given(
    raw=st.one_of(
        st.text(max_size=80),
        st.lists(st.dictionaries(st.text(max_size=10), st.text(max_size=5)), max_size=3),
    )
)
def test_fuzz_parse_edits(raw: object) -> None:
    try:
        edits = parse_edits(raw)
    except EditError:
        return
    assert edits and all(isinstance(e, Edit) for e in edits)


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(
        st.text(alphabet="abcdef (){}", min_size=0, max_size=30), min_size=1, max_size=30
    ),
    start=st.integers(min_value=0, max_value=29),
    size=st.integers(min_value=1, max_value=5),
)
def test_fuzz_exact_block_is_found_where_it_is(lines: list[str], start: int, size: int) -> None:
    content = "\n".join(lines) + "\n"
    block = "\n".join(lines[start : start + size])
    overlapping = sum(content.startswith(block, i) for i in range(len(content)))
    if not block or overlapping != 1:
        return
    (match,) = locate(content, block)
    assert content[match.start : match.end] == block
