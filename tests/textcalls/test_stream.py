"""Call blocks found in a streamed answer: what is shown, what is held, what becomes a call."""

from __future__ import annotations

import random

import pytest

from codecompanion.textcalls.stream import CallScanner, FoundCalls, Piece, Policy, ShownText
from tests.support.textcalls import CATALOG

CALL_JSON = (
    '```json\n{"name": "calculator", "arguments": '
    '{"num1": 100, "num2": 50, "operation": "multiply"}}\n```\n'
)
CALL_XML = (
    "```xml\n<tool>\n  <name>calculator</name>\n  <parameters>\n    <num1>100</num1>\n"
    "    <num2>50</num2>\n    <operation>multiply</operation>\n  </parameters>\n</tool>\n```\n"
)
BAD_ARGS = '```json\n{"name": "calculator", "arguments": {"num1": "a lot"}}\n```\n'


def scan(text: str, policy: Policy, sizes: int | None = None) -> tuple[str, list[Piece]]:
    """Feed `text` in pieces (random sizes when `sizes` is a seed); the shown text and pieces."""
    scanner = CallScanner(CATALOG, policy)
    pieces: list[Piece] = []
    rng = random.Random(sizes)
    position = 0
    while position < len(text):
        step = rng.randint(1, 7) if sizes is not None else len(text)
        pieces += scanner.feed(text[position : position + step])
        position += step
    pieces += scanner.close()
    shown = "".join(p.text for p in pieces if isinstance(p, ShownText))
    assert shown == "".join(scanner.shown)
    assert "".join(scanner.raw) == text
    return shown, pieces


def calls(pieces: list[Piece]) -> list[str]:
    return [c.name for p in pieces if isinstance(p, FoundCalls) for c in p.calls]


@pytest.mark.parametrize("seed", [None, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("policy", ["prompt", "recover"])
@pytest.mark.parametrize("block", [CALL_JSON, CALL_XML])
def test_trailing_call_block_is_a_call_and_not_shown(
    seed: int | None, policy: Policy, block: str
) -> None:
    shown, pieces = scan("I'll calculate that.\n\n" + block + "\n", policy, seed)
    assert calls(pieces) == ["calculator"]
    assert shown.strip() == "I'll calculate that."


@pytest.mark.parametrize("seed", [None, 7, 8])
def test_the_real_models_answer_shape(seed: int | None) -> None:
    answer = (
        '```json\n{\n  "name": "calculator",\n  "arguments": {\n    "num1": 100,\n'
        '    "num2": 50,\n    "operation": "multiply"\n  }\n}\n```'
    )
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == ["calculator"] and shown == ""


@pytest.mark.parametrize("seed", [None, 11, 12])
@pytest.mark.parametrize("policy", ["prompt", "recover"])
def test_bare_json_answer(seed: int | None, policy: Policy) -> None:
    answer = '  {"name": "read_file", "arguments": {"path": "a.txt"}}\n'
    shown, pieces = scan(answer, policy, seed)
    assert calls(pieces) == ["read_file"] and shown == ""


@pytest.mark.parametrize("seed", [None, 14, 15])
def test_the_real_models_doubled_braces_are_a_call(seed: int | None) -> None:
    # Qwen2.5-Coder-1.5B's answer to a read question with a short read_file schema (llama-server,
    # tools offered natively): its template's call object, braces doubled, no <tool_call> tag.
    answer = '{{"name": "read_file", "arguments": {"path": "server/settings.py"}}}}'
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == ["read_file"] and shown == ""


@pytest.mark.parametrize("seed", [None, 13])
def test_bare_json_that_is_not_a_call_is_shown(seed: int | None) -> None:
    answer = '{"name": "my-package", "version": "1.0.0"}'
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == [] and shown == answer


@pytest.mark.parametrize("seed", [None, 21, 22, 23])
def test_recover_example_quoted_in_prose_stays_text(seed: int | None) -> None:
    answer = "To multiply, a call looks like this:\n\n" + CALL_JSON + "\nThen the tool answers.\n"
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == [] and shown == answer


def test_prompt_mode_takes_a_call_followed_by_text() -> None:
    answer = CALL_XML + "\nWaiting for the result.\n"
    shown, pieces = scan(answer, "prompt")
    assert calls(pieces) == ["calculator"] and shown == "\nWaiting for the result.\n"


@pytest.mark.parametrize("seed", [None, 31])
def test_recover_never_for_invalid_arguments_or_tools_not_offered(seed: int | None) -> None:
    not_offered = '```json\n{"name": "delete_everything", "arguments": {}}\n```\n'
    xml_not_offered = "```xml\n<tool><name>rm</name><parameters/></tool>\n```\n"
    for answer in (BAD_ARGS, not_offered, xml_not_offered):
        shown, pieces = scan(answer, "recover", seed)
        assert calls(pieces) == [] and shown == answer


def test_prompt_mode_passes_invalid_arguments_on_for_an_error_result() -> None:
    _, pieces = scan(BAD_ARGS, "prompt")
    found = [p for p in pieces if isinstance(p, FoundCalls)]
    assert found[0].calls[0].arguments == {"num1": "a lot"}


@pytest.mark.parametrize("seed", [None, 41, 42])
@pytest.mark.parametrize("policy", ["prompt", "recover"])
def test_several_blocks_several_calls(seed: int | None, policy: Policy) -> None:
    answer = CALL_JSON + "\n" + CALL_XML
    shown, pieces = scan(answer, policy, seed)
    assert calls(pieces) == ["calculator", "calculator"] and shown.strip() == ""


@pytest.mark.parametrize("policy", ["prompt", "recover"])
def test_a_block_inside_a_longer_fence_is_text(policy: Policy) -> None:
    answer = "Example:\n\n````markdown\n" + CALL_JSON + "````\n"
    shown, pieces = scan(answer, policy, 3)
    assert calls(pieces) == [] and shown == answer


@pytest.mark.parametrize("policy", ["prompt", "recover"])
def test_indented_inline_and_other_language_blocks_are_text(policy: Policy) -> None:
    answer = (
        'Use `{"name": "calculator"}` inline.\n\n'
        "    ```json\n    " + CALL_JSON.replace("```", "").strip() + "\n    ```\n"
        '```python\nprint({"name": "calculator", "arguments": {}})\n```\n'
    )
    shown, pieces = scan(answer, policy, 5)
    assert calls(pieces) == [] and shown == answer


@pytest.mark.parametrize("seed", [None, 51])
def test_tool_call_tags_and_unfenced_tool_elements(seed: int | None) -> None:
    answer = (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>\n'
        "<tool><name>calculator</name><parameters><num1>1</num1><num2>2</num2>"
        "<operation>add</operation></parameters></tool>\n"
    )
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == ["read_file", "calculator"] and shown == ""


@pytest.mark.parametrize("seed", [None, 61])
def test_ordinary_code_blocks_pass_through_while_streaming(seed: int | None) -> None:
    answer = 'Here:\n```python\nx = 1\n```\n```\nplain\n```\n```json\n{"a": 1}\n```\nDone.'
    shown, pieces = scan(answer, "recover", seed)
    assert calls(pieces) == [] and shown == answer


def test_text_is_shown_as_it_streams_not_at_the_end() -> None:
    scanner = CallScanner(CATALOG, "recover")
    assert scanner.feed("Hello") == [ShownText("Hello")]
    assert scanner.feed(" world\n``") == [ShownText(" world\n")]  # the fence start waits
    assert scanner.feed("`python\n") == [ShownText("```python\n")]
    assert scanner.feed("x") == [ShownText("x")]


def test_a_held_block_waits_and_text_after_it_releases_it() -> None:
    scanner = CallScanner(CATALOG, "recover")
    assert scanner.feed("ok\n" + CALL_JSON) == [ShownText("ok\n")]
    assert scanner.feed("\n  ") == []
    assert scanner.feed("so") == [ShownText(CALL_JSON + "\n  so")]
    assert scanner.close() == []


def test_unclosed_block_at_the_end_is_still_read() -> None:
    shown, pieces = scan(CALL_JSON.rstrip("`\n"), "recover")
    assert calls(pieces) == ["calculator"] and shown == ""


def test_empty_and_whitespace_answers() -> None:
    assert scan("", "recover")[0] == ""
    assert scan(" \n ", "prompt")[0] == " \n "
