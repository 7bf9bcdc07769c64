"""Command lines the shell would only split into words: run as the program itself, no `sh -c`.

Starting the shell first costs a whole program start (about a millisecond) before the command
itself starts. A line of plain words (letters, digits and `_./:,@%+=-`, separated by blanks)
means the same to every POSIX shell: no quoting, expansion, globbing, redirection, operators
or comments, so running its words directly gives the program the same arguments. The first
word must name a program, not a shell builtin or keyword (those only exist inside the shell),
nor be an assignment. Anything else goes through `sh -c` as written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_WORD = r"[A-Za-z0-9_./:,@%+=-]+"
_PLAIN = re.compile(rf"[ \t]*({_WORD}(?:[ \t]+{_WORD})*)[ \t]*")
# Builtins and reserved words of dash and bash (either may be /bin/sh).
_SHELL_WORDS = frozenset(
    """
    . : [ [[ ]] ! { } alias bg bind break builtin caller case cd chdir command compgen complete
    compopt continue coproc declare dirs disown do done echo elif else enable esac eval exec exit
    export false fc fg fi for function getopts hash help history if in jobs kill let local logout
    mapfile popd printf pushd pwd read readarray readonly return select set shift shopt source
    suspend test then time times trap true type typeset ulimit umask unalias unset until wait
    while
    """.split()
)


def plain_argv(cmd: str) -> list[str] | None:
    """The program and arguments `sh -c cmd` would run, or None if the line needs the shell."""
    match = _PLAIN.fullmatch(cmd)
    if match is None:
        return None
    words = match.group(1).split()
    if "=" in words[0] or words[0] in _SHELL_WORDS:
        return None
    return words


def shell_like_env(env: Mapping[str, str], cwd: str) -> dict[str, str]:
    """`env` as the shell would pass it on in `cwd`: `PWD` names the working directory.

    The shell keeps an inherited `PWD` that leads to the same directory (a path through a
    symlink) and otherwise sets it to the directory's real path.
    """
    inherited = env.get("PWD")
    if inherited and os.path.isabs(inherited) and os.path.realpath(inherited) == cwd:
        return dict(env)
    return {**env, "PWD": cwd}
