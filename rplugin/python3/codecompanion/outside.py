"""Values from outside the plugin's own types, named for what they are before they are read.

`Json` is a value decoded from JSON or msgpack (a provider's answer, a saved chat, a message
from Lua, a model's tool arguments); `UserValue` is whatever the user's config file or a
plugin gave (a table, a string, a function). Both are `Any` to the type checker: their readers
check each piece with `isinstance` as they take it, and the data's shape is not ours to promise.
An internal object is never typed with them (`tests/test_any_seams.py`).
"""

from __future__ import annotations

from typing import Any, TypeAlias

Json: TypeAlias = Any
UserValue: TypeAlias = Any
