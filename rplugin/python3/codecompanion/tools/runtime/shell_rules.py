"""What a shell line runs, as allow/deny rules see it, and whether that can be known at all.

Every simple command of the line (see shell_parse) is unwrapped: keywords and assignments are
dropped, wrapper programs whose options are modelled (`env`, `timeout`, `nice`, `sudo`, `exec`,
`command`, ...) are looked through, `sh -c '...'`, `eval`, `trap` and `find -exec` are read
inside. A command whose program the shell would compute (`$x`, `$(...)`, `r[m]`, `{r,}m`), or
which hands its commands to something the reader cannot see (`xargs`, a shell reading stdin,
`source`, a wrapper option it does not model) has no known program: any deny rule could match
it, and the line is uncertain, so neither an allow rule nor YOLO runs it without asking.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .shell_parse import MAX_DEPTH, Parsed, Word, parse

_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!"})
_KEYWORDS |= {"{", "}", "esac", "coproc"}
# Programs that run commands in ways the reader cannot see: always uncertain.
_OPAQUE = frozenset(
    "xargs parallel watch su runuser chroot flock strace ltrace gdb valgrind unshare nsenter "
    "firejail systemd-run script chronic unbuffer taskset cgexec fakeroot proot rlwrap entr "
    "pkexec sg newgrp expect source . alias function case select hash enable".split()
)
_SHELLS = frozenset("sh bash dash zsh ksh mksh ash posh yash fish".split())
# Variables that change which program a name runs or make shells and loaders run code.
_STEERING = frozenset(
    "PATH BASH_ENV ENV IFS PS4 PROMPT_COMMAND SHELLOPTS BASHOPTS BASH_FUNC CDPATH "
    "LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT PYTHONSTARTUP PYTHONPATH PERL5OPT NODE_OPTIONS".split()
)
_DECLARE = frozenset({"export", "declare", "typeset", "readonly", "local"})
# A line naming git's control files: git runs the programs written there (hooks, filters).
_GIT_CONTROL = re.compile(r"(^|[^\w.-])\.git(/|$|[^\w.-])|\.gitattributes|\.gitmodules")


@dataclass(frozen=True)
class Options:
    """The options a wrapper takes before its command (anything else makes it uncertain)."""

    flags: str = ""
    with_value: str = ""
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()
    operands: int = 0  # words after the options that are not the command (timeout's duration)
    numeric: bool = False  # `-10` is an option (nice)


def _opts(flags: str = "", values: str = "", lf: str = "", lv: str = "", **kw: int) -> Options:
    return Options(flags, values, frozenset(lf.split()), frozenset(lv.split()), **kw)  # type: ignore[arg-type]


_WRAPPERS: dict[str, Options] = {
    "command": _opts("p"),
    "builtin": _opts(),
    "exec": _opts("cl", "a"),
    "nohup": _opts(),
    "busybox": _opts(),
    "time": _opts("pvaq", "fo", "verbose append quiet portability", "format output"),
    "nice": Options("", "n", frozenset(), frozenset({"adjustment"}), numeric=True),
    "timeout": _opts(
        "v", "sk", "preserve-status foreground verbose", "signal kill-after", operands=1
    ),
    "stdbuf": _opts("", "ioe", "", "input output error"),
    "setsid": _opts("cfw", "", "ctty fork wait"),
    "ionice": _opts("t", "cn", "ignore", "class classdata"),
    "sudo": _opts(
        "bEHknPS",
        "ugCDRTh",
        "background preserve-env non-interactive",
        "user group chdir close-from host prompt chroot command-timeout",
    ),  # fmt: skip
    "doas": _opts("n", "uC"),
    "env": _opts("i0v", "uC", "ignore-environment null debug", "unset chdir"),
}
_SHELL_OPTIONS = _opts(
    "abefhkmnptuvxBCEHPT", "oO", "norc noprofile posix login noediting", "rcfile init-file"
)


@dataclass(frozen=True)
class Command:
    """One command as it would run: the program's name (None when unknown) and its arguments."""

    program: str | None
    spelled: str
    args: tuple[Word, ...]

    def forms(self) -> list[str]:
        """The texts rules match: `program args` with the name, and with the path as written."""
        rest = "".join(" " + word.text for word in self.args)
        names = {self.spelled, self.program or self.spelled}
        return [name + rest for name in sorted(names)]

    @property
    def exact(self) -> bool:
        """True if the program and every argument are known before the shell runs."""
        return self.program is not None and all(word.known for word in self.args)


@dataclass(frozen=True)
class Reading:
    """Every command of a line and what made it uncertain (nothing: the reader is sure)."""

    commands: tuple[Command, ...]
    doubts: tuple[str, ...]
    redirects: bool

    @property
    def certain(self) -> bool:
        """True if the reader knows every program the line runs."""
        return not self.doubts and all(c.program is not None for c in self.commands)


def read(line: str) -> Reading:
    """Read a shell line into the commands it runs."""
    parsed = parse(line)
    if _GIT_CONTROL.search(line):
        parsed.doubt("it names git's control files (.git/, .gitattributes, .gitmodules)")
    commands: list[Command] = []
    _collect(parsed, commands, 0)
    return Reading(tuple(commands), tuple(parsed.doubts), parsed.redirects)


def _collect(parsed: Parsed, out: list[Command], depth: int) -> None:
    for simple in parsed.commands:
        _unwrap(list(simple.words), parsed, out, depth)


def _nested(text: str, parsed: Parsed, out: list[Command], depth: int) -> None:
    """Read a script inside a command (`sh -c`, `eval`, `trap`) into the same result."""
    if depth >= MAX_DEPTH:
        parsed.doubt("nesting too deep")
        out.append(Command(None, text, ()))
        return
    inner = parse(text, depth + 1)
    _collect(inner, out, depth + 1)  # may add doubts to `inner`: copied below
    parsed.redirects = parsed.redirects or inner.redirects
    for reason in inner.doubts:
        parsed.doubt(reason)


def _unknown(words: Sequence[Word], parsed: Parsed, out: list[Command], reason: str) -> None:
    parsed.doubt(reason)
    out.append(Command(None, words[0].text if words else "", tuple(words[1:])))


def _unwrap(words: list[Word], parsed: Parsed, out: list[Command], depth: int) -> None:
    """Record the command `words` runs, looking through wrappers and nested scripts."""
    while (
        words and words[0].known and (words[0].text in _KEYWORDS or _is_assignment(words[0].text))
    ):
        _steering(words[0], parsed, out)
        words = words[1:]
    if not words or words[0].text in ("for", "in"):
        return  # a loop header names no program
    first = words[0]
    if not first.known or first.glob:
        _unknown(words, parsed, out, "a command name the shell computes")
        return
    program = os.path.basename(first.text) or first.text
    out.append(Command(program, first.text, tuple(words[1:])))
    rest = words[1:]
    if program in _OPAQUE:
        _unknown(words, parsed, out, f"`{program}` runs commands the rules cannot see")
    elif program in _SHELLS:
        _shell(program, rest, parsed, out, depth)
    elif program in ("eval", "trap"):
        script = rest[:1] if program == "trap" else rest
        if all(word.known for word in script):
            _nested(" ".join(word.text for word in script), parsed, out, depth)
        else:
            _unknown(words, parsed, out, f"`{program}` of text the shell computes")
    elif program == "find":
        _find(rest, parsed, out, depth)
    elif program in _DECLARE:
        for word in rest:
            _steering(word, parsed, out)
    elif program in _WRAPPERS:
        _wrapper(program, words, parsed, out, depth)


def _is_assignment(text: str) -> bool:
    name, equals, _value = text.partition("=")
    return bool(equals) and name.isidentifier()


def _steering(word: Word, parsed: Parsed, out: list[Command]) -> None:
    """An assignment to PATH, BASH_ENV, LD_PRELOAD...: what runs next cannot be known."""
    name = word.text.partition("=")[0]
    if _is_assignment(word.text) and (name in _STEERING or name.startswith("BASH_FUNC_")):
        _unknown([word], parsed, out, f"an assignment to {name}")


def _wrapper(
    program: str, words: list[Word], parsed: Parsed, out: list[Command], depth: int
) -> None:
    rest = words[1:]
    if program == "command" and any(w.text in ("-v", "-V") for w in rest[:2]):
        return  # only prints what a name is
    if program == "sudo" and any(w.text in ("-i", "-s", "-e", "--login", "--shell") for w in rest):
        _unknown(words, parsed, out, "`sudo` running a shell")
        return
    start = skip_options(rest, _WRAPPERS[program])
    if start is None:
        _unknown(words, parsed, out, f"options of `{program}` the rules do not model")
        return
    inner = rest[start:]
    if program == "env":
        while inner and inner[0].known and _is_assignment(inner[0].text):
            _steering(inner[0], parsed, out)
            inner = inner[1:]
    if inner:
        _unwrap(inner, parsed, out, depth)


def skip_options(words: Sequence[Word], spec: Options) -> int | None:
    """The index of the first word after the options and operands of `spec`; None if unsure."""
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if not word.known:
            return None
        if text == "--":
            index += 1
            break
        if not text.startswith("-") or text == "-":
            break
        step = _option(text, spec)
        if step is None:
            return None
        index += step
    index += spec.operands
    if index > len(words) or not all(w.known for w in words[index - spec.operands : index]):
        return None
    return index


def _option(text: str, spec: Options) -> int | None:
    """How many words the option `text` takes (1 or 2); None if `spec` does not know it."""
    if text.startswith("--"):
        name, equals, _value = text[2:].partition("=")
        if name in spec.long_flags and not equals:
            return 1
        if name in spec.long_values:
            return 1 if equals else 2
        return None
    if spec.numeric and text[1:].isdigit():
        return 1
    for position, letter in enumerate(text[1:], start=1):
        if letter in spec.with_value:
            return 1 if position < len(text) - 1 else 2
        if letter not in spec.flags:
            return None
    return 1


def _shell(program: str, rest: list[Word], parsed: Parsed, out: list[Command], depth: int) -> None:
    """`sh -c 'script'` is read inside; a shell reading its input is uncertain."""
    command_string = any(
        w.known and w.text.startswith("-") and not w.text.startswith("--") and "c" in w.text
        for w in rest
    )
    spec = _SHELL_OPTIONS
    if command_string:
        spec = Options(spec.flags + "c", spec.with_value, spec.long_flags, spec.long_values)
    start = skip_options(rest, spec)
    if start is None:
        _unknown([Word(program), *rest], parsed, out, f"options of `{program}` not modelled")
    elif command_string and start < len(rest) and rest[start].known:
        _nested(rest[start].text, parsed, out, depth)
    elif command_string or start >= len(rest) or any(w.text == "-s" for w in rest[:start]):
        _unknown([Word(program), *rest], parsed, out, f"`{program}` reading commands it is given")


def _find(rest: list[Word], parsed: Parsed, out: list[Command], depth: int) -> None:
    """The commands of `find ... -exec cmd args {} ;` (also -execdir, -ok, -okdir)."""
    index = 0
    while index < len(rest):
        if rest[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(rest) and rest[end].text not in (";", "+"):
                end += 1
            _unwrap(rest[index + 1 : end], parsed, out, depth)
            index = end
        index += 1


def could_deny(command: Command, pattern: str) -> bool:
    """True if a deny `pattern` could match `command` once the shell expanded what is unknown."""
    if command.program is None:
        return True
    if command.exact and not any(word.glob for word in command.args):
        return False
    head = pattern.split(" ", 1)[0]
    return fnmatchcase(command.program, head) or fnmatchcase(command.spelled, head)


def deny_matches(reading: Reading, line: str, deny: Sequence[str]) -> bool:
    """True if any deny pattern matches the line, one of its commands, or could match one."""
    forms = [line.strip(), *(form for c in reading.commands for form in c.forms())]
    if any(fnmatchcase(form, pattern) for form in forms for pattern in deny):
        return True
    return any(could_deny(c, pattern) for c in reading.commands for pattern in deny)


def allow_matches(reading: Reading, allow: Sequence[str]) -> bool:
    """True if the line is certain, has no redirection, and every command matches allow.

    Commands are matched as written (quotes removed), so `rm *` does not allow `./rm x`.
    """
    if not allow or not reading.certain or reading.redirects or not reading.commands:
        return False
    if not all(c.exact for c in reading.commands):
        return False
    return all(
        any(fnmatchcase(c.forms()[0 if c.spelled == c.program else -1], p) for p in allow)
        for c in reading.commands
    )
