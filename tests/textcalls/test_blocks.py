"""Reading one block of text as calls: XML and JSON shapes, typing by schema, what stays text."""

from __future__ import annotations

import pytest

from codecompanion.textcalls.blocks import read_block, typed
from tests.support.textcalls import CATALOG

CALC = {"num1": 100, "num2": 50, "operation": "multiply"}


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "calculator", "arguments": {"num1": 100, "num2": 50, "operation": "multiply"}}',
        '{"name": "calculator", "parameters": {"num1": 100, "num2": 50, "operation": "multiply"}}',
        '{"name": "calculator", "arguments": "{\\"num1\\": 100, \\"num2\\": 50, '
        '\\"operation\\": \\"multiply\\"}"}',
        '{"type": "function", "function": {"name": "calculator", "arguments": '
        '{"num1": 100, "num2": 50, "operation": "multiply"}}}',
        '{"tool": "calculator", "args": {"num1": 100, "num2": 50, "operation": "multiply"}}',
        '[{"name": "calculator", "arguments": {"num1": 100, "num2": 50, "operation": "multiply"}}]',
        # Broken JSON as Qwen2.5-Coder-1.5B writes it (doubled braces; a brace short): repaired.
        '{{"name": "calculator", "arguments": '
        '{"num1": 100, "num2": 50, "operation": "multiply"}}}}',
        '{"name": "calculator", "arguments": {"num1": 100, "num2": 50, "operation": "multiply"}',
    ],
)
def test_json_call_shapes(body: str) -> None:
    calls = read_block("json", body, CATALOG)
    assert calls is not None and len(calls) == 1
    assert (calls[0].name, calls[0].arguments, calls[0].source) == ("calculator", CALC, "json")


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "my-package", "version": "1.0.0"}',  # package.json: a name, not a tool
        '{"name": "unknown_tool", "arguments": {}}',  # not offered
        '{"name": "calculator", "version": 2}',  # extra keys, no arguments
        '{"name": "calculator", "arguments": [1, 2]}',  # arguments not an object
        '{"name": "calculator", "arguments": "not json"}',
        '[{"name": "calculator", "arguments": {}}, {"id": 3}]',  # a list with data in it
        "[]",
        '{"name": "calculator", "arguments": {',  # cut off
        "[" * 5000 + "]" * 5000,  # too deep for the decoder
        # Objects in a row: a call beside data is data.
        '{"name": "calculator", "arguments": {}}\n{"name": "my-package", "version": "1"}',
        '{"name": "calculator", "arguments": {}} trailing words',
    ],
)
def test_json_that_is_not_a_call(body: str) -> None:
    assert read_block("json", body, CATALOG) is None


def test_json_objects_in_a_row_give_several_calls() -> None:
    # Qwen2.5-Coder-1.5B's plan for a fix, as it wrote it in one ```json block.
    body = (
        '{"name": "read_file", "arguments": {"path": "app.py"}}\n'
        '{"name": "calculator", "arguments": {"num1": 1, "num2": 2, "operation": "add"}},\n'
        '{"name": "read_file", "arguments": {"path": "b.py"}}'
    )
    calls = read_block("json", body, CATALOG)
    assert calls is not None and [c.name for c in calls] == ["read_file", "calculator", "read_file"]
    assert calls[2].arguments == {"path": "b.py"}


def test_json_list_gives_several_calls() -> None:
    body = (
        '[{"name": "calculator", "arguments": {"num1": 1, "num2": 2, "operation": "add"}},'
        ' {"name": "read_file", "arguments": {"path": "a.py"}}]'
    )
    calls = read_block("", body, CATALOG)
    assert calls is not None and [c.name for c in calls] == ["calculator", "read_file"]


def test_xml_call_typed_by_schema() -> None:
    body = """<tool>
  <name>calculator</name>
  <parameters>
    <num1>100</num1>
    <num2> 50 </num2>
    <operation>multiply</operation>
  </parameters>
</tool>"""
    calls = read_block("xml", body, CATALOG)
    assert calls is not None and calls[0].arguments == CALC and calls[0].source == "xml"


def test_xml_older_inputs_shape_and_multiline_code() -> None:
    body = """<tool>
  <name>code_runner</name>
  <parameters>
    <inputs>
      <lang>python</lang>
      <code>
for i in range(2):
    print(i &lt; 3)
</code>
    </inputs>
  </parameters>
</tool>"""
    calls = read_block("xml", body, CATALOG)
    assert calls is not None
    assert calls[0].arguments == {
        "lang": "python",
        "code": "for i in range(2):\n    print(i < 3)",
    }


def test_xml_that_is_not_well_formed_is_read_leniently() -> None:
    body = (
        "<tool><name>code_runner</name><parameters><lang>python</lang>"
        "<code>if a < b and c & d: print('</x>')</code></parameters></tool>"
    )
    calls = read_block("xml", body, CATALOG)
    assert calls is not None
    assert calls[0].arguments["code"] == "if a < b and c & d: print('</x>')"


def test_xml_cdata_and_several_tools() -> None:
    body = (
        "<tools><tool><name>code_runner</name><parameters><lang>sh</lang>"
        "<code><![CDATA[echo a && echo <b>]]></code></parameters></tool>"
        "<tool><name>read_file</name><parameters><path>x.txt</path><start>null</start>"
        "<paths><item>a</item><item>b</item></paths><flags><all>true</all></flags>"
        "</parameters></tool></tools>"
    )
    calls = read_block("", body, CATALOG)
    assert calls is not None and len(calls) == 2
    assert calls[0].arguments == {"lang": "sh", "code": "echo a && echo <b>"}
    assert calls[1].arguments == {
        "path": "x.txt",
        "start": None,
        "paths": ["a", "b"],
        "flags": {"all": True},
    }


def test_xml_names_a_tool_that_is_not_offered_still_a_call() -> None:
    calls = read_block("xml", "<tool><name>rm_rf</name><parameters/></tool>", CATALOG)
    assert calls is not None and calls[0].name == "rm_rf" and calls[0].arguments == {}


@pytest.mark.parametrize(
    ("lang", "body"),
    [
        ("xml", "<note><name>calculator</name></note>"),  # another root
        ("xml", "<tool><parameters/></tool>"),  # no name
        ("python", '{"name": "calculator", "arguments": {}}'),  # a code block of another language
        ("xml", '<!DOCTYPE x [<!ENTITY a "b">]><tool><name>&a;</name></tool>'),
        ("json", "   "),
        ("xml", "<tool><name>unknown</name> <parameters><a>1 < 2</a></parameters></tool>"),
    ],
)
def test_blocks_that_stay_text(lang: str, body: str) -> None:
    assert read_block(lang, body, CATALOG) is None


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("42", "integer", 42),
        ("42.0", "integer", 42),
        ("4.5", "number", 4.5),
        ("TRUE", "boolean", True),
        ("no", "boolean", "no"),  # left for validation to reject
        ("null", "integer", None),
        ("", "array", None),
        ('["a"]', "array", ["a"]),
        ("abc", "integer", "abc"),
        ("  keep  ", "string", "keep"),
        ("\n  two\n  lines\n", "string", "  two\n  lines"),
    ],
)
def test_typed(text: str, kind: str, value: object) -> None:
    assert typed(text, kind) == value


def test_a_block_copied_from_attached_context_or_a_result_is_a_quote() -> None:
    from codecompanion.messages import Message
    from codecompanion.textcalls.quotes import QuoteCheck, read_texts
    from codecompanion.textcalls.stream import CallScanner, FoundCalls

    call = '{"name": "calculator", "arguments": {"num1": 1, "num2": 2, "operation": "add"}}'
    block = f"```json\n{call}\n```"
    context = Message("user", "notes.md:\n" + block.replace("\n", "\n  "), visible=False)
    typed = Message("user", "what does it say?")
    check = QuoteCheck(read_texts([context, typed]), CATALOG)
    scanner = CallScanner(CATALOG, "prompt")
    found = [
        p for p in [*scanner.feed(block + "\n"), *scanner.close()] if isinstance(p, FoundCalls)
    ]
    assert found and check.quoted(found[0])
    assert not QuoteCheck(read_texts([typed]), CATALOG).quoted(found[0])
