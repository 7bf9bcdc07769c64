"""Which of CodeCompanion's forms a callback is written in, read from its parameters.

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

from collections.abc import Callable
from typing import Any, Literal

from ..model.calling import positional

OutputForm = Literal["tools", "meta", "cmd"]
CmdForm = Literal["handler", "opts", "either", "input", "args", "previous", "self"]

_META_NAMES = frozenset({"meta", "opts", "options", "ctx", "context"})
_TOOLS_NAMES = frozenset({"tools", "agent", "tool_system", "system", "_tools"})
_STREAM_NAMES = frozenset(
    {"stdout", "stderr", "output", "out", "err", "error", "result", "results", "data", "lines"}
)
_INPUT_NAMES = frozenset({"input", "input_", "previous", "prev", "last", "inp"})


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
    both the previous result and the opts (`CmdOpts` in cmds.py); it has finished when it
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
