"""A macOS Seatbelt (`sandbox-exec`) profile with the same promises as the Linux sandbox.

Written from Apple's profile language but never run here (the project is tested on Linux), so
the host does not use it yet: commands on macOS are reported as unconfined. `command` shows how
a command would be wrapped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def _quote(path: str) -> str:
    """A Seatbelt string literal (backslash and double quote escaped)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(
    project: str, temp: str, read_only: Iterable[str], deny_read: Iterable[str], network: bool
) -> str:
    """The profile text: read all but `deny_read`, write only `project` and `temp` (minus
    `read_only` and `.git`), no network unless `network`."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target children))",
        "(allow sysctl-read mach-lookup ipc-posix-shm iokit-open)",
        "(allow file-read*)",
    ]
    hidden = [os.path.realpath(os.path.expanduser(path)) for path in deny_read]
    lines += [f"(deny file-read* (subpath {_quote(path)}))" for path in hidden]
    lines.append(f"(allow file-write* (subpath {_quote(project)}) (subpath {_quote(temp)}))")
    lines.append('(allow file-write* (literal "/dev/null") (literal "/dev/zero"))')
    for path in [os.path.join(project, ".git"), *read_only]:
        lines.append(f"(deny file-write* (subpath {_quote(os.path.realpath(path))}))")
    if network:
        lines.append("(allow network*)")
    return "\n".join(lines) + "\n"


def command(argv: list[str], profile_text: str) -> list[str]:
    """`argv` under `sandbox-exec` with the profile."""
    return ["sandbox-exec", "-p", profile_text, *argv]
