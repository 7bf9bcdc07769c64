"""The three ways to write a tool give the same tool; bad shapes fail early and clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pytest

from codecompanion.tools import Tool, tool
from codecompanion.tools.compat.coerce import coerce
from tests.support.builtin import FakeTools
from tests.support.tools import CALCULATOR_SCHEMA, calculate, calculator


def decorated_calculator() -> Tool:
    @tool(strict=True)
    def calculator(
        num1: int, num2: int, operation: Literal["add", "subtract", "multiply", "divide"]
    ) -> float:
        """Perform simple mathematical operations on a user's machine

        Args:
            num1: The first number in the calculation
            num2: The second number in the calculation
            operation: The mathematical operation to perform on the two numbers

        Returns:
            The result.
        """
        return {"add": num1 + num2, "multiply": num1 * num2}[operation]

    assert isinstance(calculator, Tool)
    return calculator


def test_dict_tool_and_decorated_function_give_the_same_schema() -> None:
    from_dict = Tool.from_dict(calculator())
    as_tool = Tool(name="calculator", cmds=[calculate], schema=CALCULATOR_SCHEMA)
    from_function = decorated_calculator()
    assert from_dict.openai_schema() == as_tool.openai_schema() == from_function.openai_schema()
    assert from_function.openai_schema() == CALCULATOR_SCHEMA


def test_coerce_accepts_each_form_and_renames() -> None:
    assert coerce(calculator()).name == "calculator"
    assert coerce(decorated_calculator(), "calc").openai_schema()["function"]["name"] == "calc"

    def plain(x: int) -> int:
        """Double x."""
        return 2 * x

    made = coerce(plain)
    assert made.parameters["properties"] == {"x": {"type": "integer"}}
    assert made.description == "Double x."


def test_decorator_docstring_continuations_annotated_and_optional() -> None:
    @tool(read_only=True, timeout=3)
    def search(
        pattern: Annotated[str, "What to look for"],
        limit: int | None = None,
        paths: list[str] | None = None,
    ) -> str:
        """Search files.

        More words that are not the summary.

        Args:
            limit: At most this many
                results, counted per file.
        """
        return pattern

    params = search.parameters
    assert search.description == "Search files."
    assert params["required"] == ["pattern"]
    assert params["properties"]["pattern"] == {"type": "string", "description": "What to look for"}
    assert (
        params["properties"]["limit"]["description"]
        == "At most this many results, counted per file."
    )
    assert params["properties"]["paths"] == {"type": "array", "items": {"type": "string"}}
    assert search.opts == {"requires_approval": False, "read_only": True, "timeout": 3}


def test_tools_parameter_is_not_in_the_schema() -> None:
    @tool
    async def where(tools: object) -> str:
        """Say where."""
        return str(tools)

    assert where.parameters["properties"] == {}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "x", "cmdz": []}, "unknown tool field(s): cmdz"),
        ({"cmds": []}, "a tool needs a name"),
        ({"name": "x", "cmds": [42]}, "cmds[0] must be a function, a list of strings or"),
        ({"name": "x", "output": {"sucess": print}}, "unknown output key 'sucess'"),
        ({"name": "x", "handlers": {"setup": "no"}}, "handlers.setup must be a function"),
        ({"name": "bad name"}, "tool name 'bad name'"),
    ],
)
def test_bad_dicts_are_rejected_with_a_clear_message(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        Tool.from_dict(data)
    assert message in str(raised.value)


def test_a_call_gets_its_own_copy_and_the_tool_stays_as_it_was(tmp_path: Path) -> None:
    from codecompanion.messages import ToolCall

    base = Tool.from_dict(calculator())
    args = {"num1": 1, "nested": {"a": 1}}
    ctx = FakeTools(cwd=tmp_path).context(ToolCall("c1", "calculator", args), base.opts)
    bound = base.start(ctx, args, {"opts": {}})
    bound.cmds.append(["echo"])
    bound.opts["x"] = 1
    args["nested"]["a"] = 2
    assert base.cmds == [calculate] and "x" not in base.opts
    assert bound.args["nested"] == {"a": 1}
    assert bound.tools.cwd == tmp_path and bound.call.id == "c1"


def test_system_prompt_may_be_a_function_of_the_schema() -> None:
    made = Tool(name="t", system_prompt=lambda schema: f"uses {schema['function']['name']}")
    made.schema = {"function": {"name": "t"}}
    assert made.prompt_text() == "uses t"
