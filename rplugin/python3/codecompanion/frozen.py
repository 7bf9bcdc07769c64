"""Frozen value classes that cost the host a class each, not a dataclass's generated methods.

The render ops and the messages from Lua are some sixty small frozen classes loaded by every
chat; a dataclass compiles six methods for each (about 5 KiB apiece, 0.5 MiB of the host's
memory in all). A class decorated with `value` (or `keyword_value`) is a dataclass to the type
checker and to `dataclasses.fields`; at run time it keeps its fields only, and `Frozen`'s methods
build, freeze, compare and show it as a frozen dataclass would.
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from typing import TYPE_CHECKING, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def value(cls: type[T]) -> type[T]:
        """A frozen dataclass (to the type checker)."""
        return cls

    @dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
    def keyword_value(cls: type[T]) -> type[T]:
        """A frozen dataclass whose fields are keyword-only (to the type checker)."""
        return cls

else:
    value = keyword_value = dataclass(init=False, repr=False, eq=False)


class Frozen:
    """The base of value classes: construction, immutability, equality, hash and repr."""

    __slots__ = ()

    if not TYPE_CHECKING:  # the type checker sees each class's dataclass methods instead

        def __init__(self, *args: object, **values: object) -> None:
            given = fields(self)
            if len(args) > len(given):
                raise TypeError(f"{type(self).__name__} takes {len(given)} values")
            for one, arg in zip(given, args, strict=False):
                if one.name in values:
                    raise TypeError(f"{type(self).__name__}: {one.name} given twice")
                values[one.name] = arg
            for one in given:
                if one.name in values:
                    held = values.pop(one.name)
                elif one.default is not MISSING:
                    held = one.default
                elif one.default_factory is not MISSING:
                    held = one.default_factory()
                else:
                    raise TypeError(f"{type(self).__name__}: {one.name} is missing")
                object.__setattr__(self, one.name, held)
            if values:
                raise TypeError(f"{type(self).__name__} has no field {next(iter(values))}")

        def __setattr__(self, name: str, held: object) -> None:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        def __eq__(self, other: object) -> bool:
            if type(other) is not type(self):
                return NotImplemented
            return _held(self) == _held(other)

        def __hash__(self) -> int:
            return hash(_held(self))

        def __repr__(self) -> str:
            shown = ", ".join(f"{one.name}={getattr(self, one.name)!r}" for one in fields(self))
            return f"{type(self).__name__}({shown})"


def _held(thing: Frozen) -> tuple[object, ...]:
    return tuple(getattr(thing, one.name) for one in fields(thing))  # type: ignore[arg-type]
