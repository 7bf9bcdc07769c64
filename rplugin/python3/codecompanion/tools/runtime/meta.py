"""The objects tool code receives, made to read right in every CodeCompanion form.

`CallTools` is what a call's callbacks get as `tools` (and as `meta`, today's name): the tool
system, plus what the tool system collected for this call (`stdout`, `stderr`) and the
`meta` keys (`tools`, `cmd`). `CmdOpts` is the third argument of a three-parameter function
cmd: the previous function's `{status, data}` and today's `opts` (`input`, `output_cb`) at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

_META_KEYS = ("tools", "cmd", "stdout", "stderr")


class CallTools:
    """The tool system as one call's callbacks see it (`tools`, or `meta` with `meta.tools`).

    Attributes of the tool system read through (`chat`, `cwd`, `confirm`, ...); `stdout` and
    `stderr` hold what this call's cmds produced so far; `cmd` is the cmd the callback is
    about; `meta["tools"]` and `meta.tools` are this object again, so both readings work.
    """

    def __init__(self, system: Any, run: Any) -> None:
        self.__dict__["_system"] = system
        self.__dict__["_run"] = run
        self.__dict__["cmd"] = None

    @property
    def stdout(self) -> list[Any]:
        """What this call's cmds gave so far, one entry per cmd (a command's is a list of lines)."""
        return list(self._run.execution.stdout)

    @property
    def stderr(self) -> list[Any]:
        """What the failing cmd of this call gave."""
        return list(self._run.execution.stderr)

    @property
    def tools(self) -> CallTools:
        """The tool system: `meta.tools` in today's CodeCompanion form."""
        return self

    @property
    def system(self) -> Any:
        """The chat's tool system itself."""
        return self._system

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_system"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "cmd":
            self.__dict__[name] = value
        else:
            setattr(self._system, name, value)

    def __getitem__(self, key: str) -> Any:
        if key in _META_KEYS:
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in _META_KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(_META_KEYS)

    def get(self, key: str, default: Any = None) -> Any:
        """`meta.get("tools")`, as a table read in Lua would."""
        return getattr(self, key) if key in _META_KEYS else default

    def with_cmd(self, cmd: Any) -> CallTools:
        """This object with `cmd` set (the cmd an output is about)."""
        self.__dict__["cmd"] = cmd
        return self


class CmdOpts(dict[str, Any]):
    """A function cmd's third argument: the previous `{status, data}` and `{input, output_cb}`.

    Keys `status`/`data` are the previous function's result (the `input` reading); keys and
    attributes `input` and `output_cb` are today's `opts` reading. Before the first function
    there is no previous result: only `input` (None) and `output_cb`.
    """

    def __init__(self, previous: dict[str, Any] | None, output_cb: Callable[..., Any]) -> None:
        super().__init__(previous or {})
        self["input"] = previous
        self["output_cb"] = output_cb
        self.input = previous
        self.output_cb = output_cb
        self.output_handler = output_cb
