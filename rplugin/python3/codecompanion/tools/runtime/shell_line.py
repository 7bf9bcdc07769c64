"""The commands a shell line runs, as deny rules should see them.

A deny pattern such as `rm *` is meant for the `rm` command however the line spells it:
after `;`, `&&`, in `$(...)` or a `{ ...; }` group, behind `if ... then`, `X=1`, `env`, `nohup`
or `exec`, quoted (`'rm'`, `r''m`, `\\rm`), by path (`/bin/rm`), with tabs, or inside
`sh -c '...'` and `eval`. This is a best-effort reading of the line, not a shell parser: it
errs towards finding more commands (a quoted `; rm x` is read as a command too), which can
only make a deny rule match more often.
"""

from __future__ import annotations

import os
import re
import shlex

# Where one command ends and another may start.
_SEPARATORS = re.compile(r"&&|\|\||[;&|\n(){}`]|\$\(")
# Words that introduce a command without being it.
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "time", "in"}
)
# Programs that run the rest of their arguments as a command.
_WRAPPERS = frozenset(
    {
        "builtin",
        "busybox",
        "chronic",
        "command",
        "doas",
        "env",
        "exec",
        "ionice",
        "nice",
        "nohup",
        "setsid",
        "stdbuf",
        "sudo",
        "time",
        "timeout",
        "unbuffer",
        "xargs",
    }
)
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPER_ARGUMENT = re.compile(r"^(-.*|\d+(\.\d+)?[smhd]?)$")  # options, counts, durations
_MAX_DEPTH = 3


def _words(piece: str) -> list[str]:
    """The piece's words with quotes and backslashes removed (as the shell would)."""
    try:
        return shlex.split(piece, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: the plain words are the best guess
        return piece.split()


def _command_words(words: list[str]) -> list[str]:
    """`words` from the program on: keywords, assignments and wrapper programs dropped."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in _KEYWORDS or _ASSIGNMENT.match(word):
            index += 1
        elif os.path.basename(word) in _WRAPPERS:
            index += 1
            while index < len(words) and _WRAPPER_ARGUMENT.match(words[index]):
                index += 1
        else:
            break
    rest = words[index:]
    if rest and "/" in rest[0]:
        rest[0] = os.path.basename(rest[0]) or rest[0]
    return rest


def _inner_script(words: list[str]) -> str | None:
    """The script of `sh -c '...'` or the words of `eval ...`, if this command is one."""
    program = words[0]
    if program == "eval":
        return " ".join(words[1:])
    if program in _SHELLS:
        for index, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and "c" in word:
                return words[index + 1]
    return None


def commands(line: str, depth: int = 0) -> list[str]:
    """Each command of `line` as `program args...` with single spaces, nested ones included."""
    found: list[str] = []
    for piece in _SEPARATORS.split(line):
        words = _command_words(_words(piece))
        if not words:
            continue
        found.append(" ".join(words))
        inner = _inner_script(words)
        if inner and depth < _MAX_DEPTH:
            found += commands(inner, depth + 1)
    return found
