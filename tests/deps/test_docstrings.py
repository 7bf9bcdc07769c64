"""`@tool` reads parameter texts from Google, NumPy and reST docstrings (docstring_parser)."""

from __future__ import annotations

from typing import Any

import pytest

from codecompanion.tools import tool

GOOGLE = """Add two numbers
given as integers.

Args:
    a (int): The first
        number.
    b: The second number.

Returns:
    The sum.
"""
NUMPY = """Add two numbers given as integers.

Parameters
----------
a : int
    The first
    number.
b : int
    The second number.

Returns
-------
int
"""
REST = """Add two numbers given as integers.

:param a: The first
    number.
:param int b: The second number.
:returns: The sum.
"""


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_parameter_texts_from_each_style(doc: str) -> None:
    def add(a: int, b: int) -> int:
        return a + b

    add.__doc__ = doc
    made: Any = tool(add)
    properties = made.parameters["properties"]
    assert made.description == "Add two numbers given as integers."
    assert properties["a"] == {"type": "integer", "description": "The first number."}
    assert properties["b"] == {"type": "integer", "description": "The second number."}


def test_no_docstring_and_plain_text() -> None:
    def plain(x: str) -> str:
        return x

    assert tool(plain).description == "plain"
    plain.__doc__ = "Just words.\n\nMore words."
    made: Any = tool(plain)
    assert (
        made.description == "Just words."
        and "description" not in made.parameters["properties"]["x"]
    )
