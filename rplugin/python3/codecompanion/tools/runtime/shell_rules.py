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

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import pairwise

from . import shell_programs
from .shell_parse import EXPANDED, MAX_DEPTH, ParsedLine, ShellWord, literal_pattern, parse

_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!"})
_KEYWORDS |= {"{", "}", "esac", "coproc"}
# Programs that run commands in ways the reader cannot see: always uncertain.
_OPAQUE = frozenset(
    "xargs parallel watch su runuser chroot flock strace ltrace gdb valgrind unshare nsenter "
    "firejail systemd-run script chronic unbuffer taskset cgexec fakeroot proot rlwrap entr "
    "pkexec sg newgrp expect source . alias function case select hash enable "
    # Wrappers whose options are not modelled: they run the command after them.
    "prlimit setpriv setarch chrt ssh-agent linux32 linux64 i386 x86_64 numactl capsh runcon "
    "bwrap systemd-nspawn dbus-run-session dbus-launch catchsegv eatmydata faketime nocache "
    "torsocks proxychains proxychains4 tsocks daemonize start-stop-daemon lckdo with-lock-ex "
    "schroot flatpak-spawn cpulimit trickle ld.so".split()
)
# The dynamic loader runs the program named after it (`/lib64/ld-linux-x86-64.so.2 /bin/rm`).
_LOADER = re.compile(r"ld(-[\w.-]+)?\.so(\.[\w.]+)?")
_SHELLS = frozenset("sh bash dash zsh ksh mksh ash posh yash fish".split())
# Variables that change which program a name runs or make shells and loaders run code.
_STEERING = frozenset(
    "PATH BASH_ENV ENV IFS PS4 PROMPT_COMMAND SHELLOPTS BASHOPTS BASH_FUNC CDPATH "
    "LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT PYTHONSTARTUP PYTHONPATH PERL5OPT NODE_OPTIONS "
    # ...and those that give programs options or helper programs (`TAR_OPTIONS=--to-command=`).
    "GLOBIGNORE TAR_OPTIONS RIPGREP_CONFIG_PATH GREP_OPTIONS PAGER EDITOR VISUAL LESSOPEN "
    "LESSCLOSE MANPAGER BROWSER GCONV_PATH".split()
)
_STEERING_PREFIXES = ("BASH_FUNC_", "LD_", "GIT_")
# Bash builtins that evaluate an array subscript in a variable name they are given:
# `printf -v 'a[$(cmd)]'` runs cmd even though the word is quoted.
_SUBSCRIPTED = frozenset(
    "printf test [ [[ declare typeset local export readonly read unset mapfile readarray wait "
    "getopts let".split()
)
# git runs programs named in these files (hooks, filters, drivers, submodule commands).
_GIT_CONTROL_NAMES = (".git", ".gitattributes", ".gitmodules")
# Characters some filesystems ignore in names (macOS HFS+): `.g\u200cit` is `.git` there.
_IGNORED_IN_NAMES = dict.fromkeys(
    [*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
_MAX_BRACE_FORMS = 256
_DECLARE = frozenset({"export", "declare", "typeset", "readonly", "local"})


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
    args: tuple[ShellWord, ...]

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
    writes: tuple[str, ...] = ()  # options that make a program write files (`sort -o`)

    @property
    def certain(self) -> bool:
        """True if the reader knows every program the line runs."""
        return not self.doubts and all(c.program is not None for c in self.commands)


@functools.lru_cache(maxsize=32)
def read(line: str) -> Reading:
    """Read a shell line into the commands it runs (a reading is immutable: the deny rules,
    the allow rules and the question about one call read its line once)."""
    parsed = parse(line)
    commands: list[Command] = []
    _collect(parsed, commands, 0)
    return Reading(tuple(commands), tuple(parsed.doubts), parsed.redirects, tuple(parsed.writes))


def _collect(parsed: ParsedLine, out: list[Command], depth: int) -> None:
    data_variables = any(
        s.words and s.words[0].text in ("read", "mapfile", "readarray", "printf")
        for s in parsed.commands
    )
    words = [w for s in parsed.commands for w in s.words] + parsed.targets
    if any(names_git_control(w, data_variables) for w in words):
        parsed.doubt("it names git's control files (.git/, .gitattributes, .gitmodules)")
    for simple in parsed.commands:
        _unwrap(list(simple.words), parsed, out, depth)


def names_git_control(word: ShellWord, data_variables: bool = False) -> bool:
    """True if `word` could name .git, .gitattributes or .gitmodules once the shell expands it.

    Letter case is ignored (case-insensitive filesystems). A path part that is one whole
    variable counts only if the line fills variables from data (`read`): otherwise its value
    is either written in the line (and checked there) or the user's own.
    """
    pattern = word.pattern or literal_pattern(word.text)
    if _is_assignment(word.text):
        # Its value, used unquoted later (globbed then), or appended to what came before.
        name, _equals, value = pattern.partition("=")
        pattern = (EXPANDED if name.endswith("+") else "") + re.sub(r"\[(.)\]", r"\1", value)
    pattern = pattern.translate(_IGNORED_IN_NAMES).lower()
    forms = _braces(pattern)
    if forms is None:
        return EXPANDED in pattern or any(name[1:] in pattern for name in _GIT_CONTROL_NAMES)
    for form in forms:
        for part in form.split("/"):
            if part == EXPANDED and not data_variables:
                continue
            if part[:1] in "*?[":
                continue  # a glob never matches a leading dot
            if any(fnmatchcase(name, part.replace(EXPANDED, "*")) for name in _GIT_CONTROL_NAMES):
                return True
    return False


def _braces(pattern: str) -> list[str] | None:
    """The words brace expansion makes of `pattern` (None: too many to list)."""
    forms = [pattern]
    for _ in range(_MAX_BRACE_FORMS):
        expanded: list[str] = []
        changed = False
        for form in forms:
            group = _brace_group(form)
            if group is None:
                expanded.append(form)
                continue
            changed = True
            start, end, choices = group
            expanded += [form[:start] + choice + form[end:] for choice in choices]
        forms = expanded
        if len(forms) > _MAX_BRACE_FORMS:
            return None
        if not changed:
            return forms
    return None


def _brace_group(form: str) -> tuple[int, int, list[str]] | None:
    """The first unescaped `{a,b}` group of `form` (a `{x..y}` range reads as anything)."""
    depth, start, index = 0, -1, 0
    commas: list[int] = []
    while index < len(form):
        char = form[index]
        if char == "[":  # an escaped character or a bracket expression: not a brace
            close = form.find("]", index + 2)
            index = len(form) if close < 0 else close + 1
            continue
        if char == "{":
            depth += 1
            start = index if depth == 1 else start
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = form[start + 1 : index]
                if commas:
                    cuts = [start, *commas, index]
                    return start, index + 1, [form[a + 1 : b] for a, b in pairwise(cuts)]
                if ".." in inner:
                    return start, index + 1, [EXPANDED]
        elif char == "," and depth == 1:
            commas.append(index)
        index += 1
    return None


def _nested(text: str, parsed: ParsedLine, out: list[Command], depth: int) -> None:
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


def _unknown(
    words: Sequence[ShellWord], parsed: ParsedLine, out: list[Command], reason: str
) -> None:
    parsed.doubt(reason)
    out.append(Command(None, words[0].text if words else "", tuple(words[1:])))


def _unwrap(words: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int) -> None:
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
    if not _runs_more(program, words, parsed, out):
        _look_inside(program, words, parsed, out, depth)


def _look_inside(
    program: str, words: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int
) -> None:
    """Read what `program` runs in turn: a shell's script, eval's text, find's -exec, the
    command of a wrapper, the assignments of `declare`; programs the rules cannot see into."""
    rest = words[1:]
    if program in _OPAQUE or _LOADER.fullmatch(program):
        _unknown(words, parsed, out, f"`{program}` runs commands the rules cannot see")
    elif program in _SHELLS:
        _shell(program, rest, parsed, out, depth)
    elif program in ("eval", "trap"):
        _evaluate(program, words, parsed, out, depth)
    elif program == "find":
        _find(rest, parsed, out, depth)
    elif program in _DECLARE:
        for word in rest:
            _steering(word, parsed, out)
    elif program in _WRAPPERS:
        _wrapper(program, words, parsed, out, depth)


def _evaluate(
    program: str, words: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int
) -> None:
    """`eval -- text` and `trap -- action SIGNAL`: the text is read as a script."""
    rest = words[1:]
    if rest and rest[0].text == "--":
        rest = rest[1:]
    elif program == "trap" and rest and rest[0].text in ("-l", "-p", "-lp", "-pl"):
        return  # only prints
    script = rest[:1] if program == "trap" else rest
    if all(word.known for word in script):
        _nested(" ".join(word.text for word in script), parsed, out, depth)
    else:
        _unknown(words, parsed, out, f"`{program}` of text the shell computes")


def _runs_more(
    program: str, words: list[ShellWord], parsed: ParsedLine, out: list[Command]
) -> bool:
    """Note what `program`'s options make it run or write; True if nothing more can be read."""
    rest = words[1:]
    if program in _SUBSCRIPTED and _evaluates_subscripts(program, rest):
        _unknown(words, parsed, out, f"bash evaluates `{program}`'s subscripts and arithmetic")
        return True
    for effect in shell_programs.effects(program, rest):
        if effect.kind == "writes":
            parsed.writes.append(effect.why)
        else:
            _unknown(words, parsed, out, effect.why)
    return False


def _evaluates_subscripts(program: str, rest: list[ShellWord]) -> bool:
    """True if bash would evaluate an array subscript or arithmetic on these words.

    `let` and `[[ a -eq b ]]` evaluate names as arithmetic; the others a subscript in a name
    (`printf -v 'a[$(cmd)]'`, `test -v 'a[...]'`, `read 'a[...]'`, `declare -i`).
    """
    texts = [w.text for w in rest]
    if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
        return True
    if program in _DECLARE and any(t.startswith(("-", "+")) and "i" in t for t in texts):
        return True
    return any("[" in word.text or not word.known for word in _named(program, rest))


def _named(program: str, rest: list[ShellWord]) -> list[ShellWord]:
    """The words `program` takes as variable names (printf's -v value, test's -v operands)."""
    if program == "printf":
        return [b for a, b in pairwise(rest) if a.text == "-v"] + [
            w for w in rest if w.text.startswith("-v") and len(w.text) > 2
        ]
    if program in ("test", "["):
        return rest if any(w.text == "-v" for w in rest) else []
    return rest


_ARITHMETIC_TESTS = frozenset("-eq -ne -lt -le -gt -ge".split())


def _is_assignment(text: str) -> bool:
    name, equals, _value = text.partition("=")
    return bool(equals) and name.removesuffix("+").isidentifier()


def _steering(word: ShellWord, parsed: ParsedLine, out: list[Command]) -> None:
    """An assignment to PATH, BASH_ENV, LD_PRELOAD...: what runs next cannot be known."""
    name = word.text.partition("=")[0].removesuffix("+")
    if _is_assignment(word.text) and (name in _STEERING or name.startswith(_STEERING_PREFIXES)):
        _unknown([word], parsed, out, f"an assignment to {name}")


def _wrapper(
    program: str, words: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int
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
        while inner and inner[0].text == "-":  # `env -` is `env -i`
            inner = inner[1:]
        while inner and inner[0].known and _is_assignment(inner[0].text):
            _steering(inner[0], parsed, out)
            inner = inner[1:]
    if inner:
        _unwrap(inner, parsed, out, depth)


def skip_options(words: Sequence[ShellWord], spec: Options) -> int | None:
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


def _shell(
    program: str, rest: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int
) -> None:
    """`sh -c 'script'` is read inside; a shell reading its input is uncertain."""
    options = _shell_options(rest)
    whole = [ShellWord(program), *rest]
    if options is None:
        _unknown(whole, parsed, out, f"options of `{program}` not modelled")
        return
    command_string, reads_input, index = options
    if index > len(rest) or any(not w.known for w in rest[:index]):
        _unknown(whole, parsed, out, f"options of `{program}` not modelled")
    elif command_string and index < len(rest) and rest[index].known:
        _nested(rest[index].text, parsed, out, depth)
    elif command_string or reads_input or index >= len(rest):
        _unknown(whole, parsed, out, f"`{program}` reading commands it is given")


def _shell_options(rest: list[ShellWord]) -> tuple[bool, bool, int] | None:
    """(a `-c` script, reads its input, index after the options) of a shell's arguments, read
    as the shell reads them: `-x` sets and `+x` unsets, `-o`/`+o`/`-O`/`+O` take the next
    word, and `c` anywhere in them makes the first operand the script; None for an option
    letter not modelled."""
    command_string, reads_input, index = False, False, 0
    while index < len(rest):
        word = rest[index]
        text = word.text
        if not word.known:
            break
        if text in ("--", "-"):
            index += 1
            break
        step = _shell_long(text)
        if step:
            index += step
            continue
        if len(text) < 2 or text[0] not in "-+" or text.startswith(("--", "++")):
            break
        letters = text[1:]
        if any(c not in _SHELL_OPTIONS.flags + "oOcsil" for c in letters):
            return None
        command_string = command_string or "c" in letters
        reads_input = reads_input or "s" in letters or "i" in letters
        index += 1 + sum(c in "oO" for c in letters)
    return command_string, reads_input, index


def _shell_long(text: str) -> int:
    """How many words a long option of the shell takes up (0: not one it knows)."""
    if not text.startswith("--"):
        return 0
    if text[2:] in _SHELL_OPTIONS.long_flags:
        return 1
    return 2 if text[2:] in _SHELL_OPTIONS.long_values else 0


def _find(rest: list[ShellWord], parsed: ParsedLine, out: list[Command], depth: int) -> None:
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
    if not allow or not reading.certain or reading.redirects or reading.writes:
        return False
    if not reading.commands:
        return False
    if not all(c.exact for c in reading.commands):
        return False
    return all(
        any(fnmatchcase(c.forms()[0 if c.spelled == c.program else -1], p) for p in allow)
        for c in reading.commands
    )
