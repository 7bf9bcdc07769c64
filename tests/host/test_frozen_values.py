"""Value classes (`frozen.py`) behave as frozen dataclasses and carry no methods of their own."""

from __future__ import annotations

import dataclasses

import pytest

from codecompanion import render_ops
from codecompanion.frozen import Frozen, keyword_value, value
from codecompanion.nvim import messages


@value
class Point(Frozen):
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


@keyword_value
class Named(Frozen):
    name: str = ""


@keyword_value
class Child(Named):
    size: int = 1


def test_built_from_positions_and_keywords_with_defaults() -> None:
    assert Point(1) == Point(x=1, y=0) == Point(1, 0, [])
    assert Point(1, tags=["a"]).tags == ["a"]
    assert Point(1).tags is not Point(1).tags  # each default_factory value is its own
    assert Child(name="n", size=2) == Child(size=2, name="n")
    assert Child().name == "" and Child().size == 1


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Point(), "x is missing"),  # type: ignore[call-arg]
        (lambda: Point(1, 2, [], 4), "takes 3 values"),  # type: ignore[call-arg]
        (lambda: Point(1, x=2), "x given twice"),  # type: ignore[misc]
        (lambda: Point(1, z=2), "has no field z"),  # type: ignore[call-arg]
    ],
)
def test_wrong_arguments_are_refused(make: object, says: str) -> None:
    with pytest.raises(TypeError, match=says):
        make()  # type: ignore[operator]


def test_frozen_equal_hashable_and_shown() -> None:
    point = Point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y  # type: ignore[misc]
    assert Named(name="a") != Child(name="a")  # another class is never equal
    assert Point(1, 2) != Point(2, 1)
    assert len({Named(name="a"), Named(name="a"), Named(name="b")}) == 2
    assert repr(Child(name="a")) == "Child(name='a', size=1)"
    assert [f.name for f in dataclasses.fields(Child)] == ["name", "size"]


def test_render_ops_and_messages_are_values_without_generated_methods() -> None:
    classes = [*render_ops.OPS, *messages.NOTIFICATIONS, *messages.REQUESTS]
    assert len(classes) > 50
    for kind in classes:
        assert issubclass(kind, Frozen)
        generated = {"__init__", "__eq__", "__repr__", "__setattr__", "__hash__"}
        assert not generated & set(vars(kind)), kind
    assert render_ops.Append("hi").wire() == {"kind": "append", "text": "hi"}
    sent = messages.decode(messages.ChatSubmit, {"id": "7", "text": "hi"})
    assert sent == messages.ChatSubmit(id="7", text="hi")
