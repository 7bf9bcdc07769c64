"""How tool code is called: which of CodeCompanion's callback forms a user function is written in,
read from its signature, and calling it with only the positional arguments it accepts.

CodeCompanion's tool API has changed shape over time, and users paste from every version:

- the `callback` form: `cmds` are `fn(self, args, input, output_handler)`, handlers and outputs
  take `(self, tools, ...)`: `success(self, tools, cmd, stdout)`, `error(self, tools, cmd,
  stderr, stdout)`, `prompt(self, tools)`, `rejected/cancelled(self, tools, cmd)`,
  `prompt_condition(self, tools, config)`;
- the `meta` form (today's): `cmds` are `fn(self, args, opts)` with `opts.input` and
  `opts.output_cb`; `success(self, stdout, meta)`, `error(self, stderr, meta)`, and
  `prompt/rejected/cancelled/setup/on_exit/prompt_condition(self, meta)`;
- older forms: `fn(self, input)` cmds whose `input` is the previous function's output, and
  `success(self, cmd, output)` outputs.

Where two forms have the same number of parameters the parameter names decide; where the names
say nothing the objects passed work for both readings (`meta` is also the tool system).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal

OutputForm = Literal["tools", "meta", "cmd"]
CmdForm = Literal["handler", "opts", "either", "input", "args", "previous", "self"]

_META_NAMES = frozenset({"meta", "opts", "options", "ctx", "context"})
_TOOLS_NAMES = frozenset({"tools", "agent", "tool_system", "system", "_tools"})
_STREAM_NAMES = frozenset(
    {"stdout", "stderr", "output", "out", "err", "error", "result", "results", "data", "lines"}
)
_INPUT_NAMES = frozenset({"input", "input_", "previous", "prev", "last", "inp"})
_ARGS_NAMES = frozenset({"args", "arguments", "params", "parameters", "action", "actions"})


def positional(fn: Callable[..., Any]) -> tuple[list[str], bool]:
    """The names of `fn`'s positional parameters, and whether it takes `*args`."""
    try:
        names, varargs = _positional(fn)
    except TypeError:  # not hashable: read it every time
        names, varargs = _positional.__wrapped__(fn)
    return list(names), varargs


# A call reads the forms of its cmd and outputs each time; inspect.signature is the slow part.
@functools.lru_cache(maxsize=512)
def _positional(fn: Callable[..., Any]) -> tuple[tuple[str, ...], bool]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return (), True
    names = tuple(
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    return names, any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def output_form(fn: Callable[..., Any], kind: str) -> OutputForm:
    """How `output.<kind>` wants its arguments: `(self, tools, cmd, ...)`, the meta form, or
    the oldest `(self, cmd, output)`."""
    names, varargs = positional(fn)
    second = names[1].lower() if len(names) > 1 else ""
    if second in _TOOLS_NAMES:
        return "tools"
    if second == "cmd":
        return "cmd"
    if second in _META_NAMES or (kind in ("success", "error") and second in _STREAM_NAMES):
        return "meta"
    if varargs:
        return "tools"
    if kind in ("success", "error"):
        # (self, stdout, meta) has three; the callback form has four or five.
        return "meta" if len(names) == 3 else "tools"
    # prompt(self, x) reads either way (the meta object is the tool system too);
    # rejected/cancelled(self, tools, cmd) has three, (self, meta) two.
    return "tools" if len(names) >= 3 else "meta"


def cmd_form(fn: Callable[..., Any]) -> CmdForm:
    """How a function cmd wants its arguments.

    - `handler`: `(self, args, input, output_handler)`;
    - `opts`: `(self, args, opts)` with `opts.input`/`opts.output_cb` (today's form);
    - `input`: `(self, args, input)` (the callback form without output_handler);
    - `previous`: `(self, input)`: the previous function's output (the oldest form);
    - `args`: `(self, args)`; `self`: `(self)`.

    A three-parameter cmd whose third name says neither (`either`) is given an object that is
    both the previous result and the opts (`CmdOpts` in runtime/runner.py); it has finished when it
    returns, as in the callback form, unless it calls `output_cb` first.
    """
    names, varargs = positional(fn)
    if varargs or len(names) >= 4:
        return "handler"
    if len(names) == 3:
        third = names[2].lower()
        if third in _INPUT_NAMES:
            return "input"
        return "opts" if third in _META_NAMES else "either"
    if len(names) == 2:
        second = names[1].lower()
        return "previous" if second in _INPUT_NAMES or second == "output" else "args"
    return "self"


def takes_config(fn: Callable[..., Any]) -> bool:
    """True for `prompt_condition(self, tools, config)`, the three-parameter form."""
    names, varargs = positional(fn)
    return varargs or len(names) >= 3


def arity(fn: Callable[..., Any], available: int) -> int:
    """How many of `available` positional arguments `fn` accepts."""
    names, varargs = positional(fn)
    return available if varargs else min(len(names), available)


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts; an awaitable it returns is not awaited."""
    return fn(*args[: arity(fn, len(args))])


async def invoke(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` with as many of `args` as it accepts (CodeCompanion's 3-argument cmds too)."""
    value = call(fn, *args)
    if inspect.isawaitable(value):
        value = await value
    return value
