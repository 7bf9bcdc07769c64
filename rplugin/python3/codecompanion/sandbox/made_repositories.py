"""A repository a confined command made: moved where git does not look, then kept only if the
user says so.

Landlock cannot refuse one name in a folder a command may write, so `git init` (or a `.git` file
pointing anywhere, or a bare repository's `HEAD`, `objects/` and `refs/`) succeeds in the
project, and the config it wrote would run its programs outside the sandbox the next time the
user, or a shell prompt, runs git there. After each confined command the host looks for
repositories git would find that were not there before it (gitdirs.GitWalk), moves each aside
at once (a `.git` renamed, a bare repository's `HEAD` renamed), and asks whether to keep it, in
every mode: kept, it goes back and is read-only for the next commands; not kept, it is removed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from .commands import CommandSandbox
from .gitdirs import Repository

Confirm = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class _Held:
    """A repository's marker moved aside: `entry` (its `.git`, or a bare one's `HEAD`) now at
    `aside`, where git does not look for it."""

    entry: str
    aside: str

    def restore(self) -> None:
        """Put it back where the command made it."""
        os.rename(self.aside, self.entry)

    def discard(self) -> None:
        """Remove it: a `.git` folder with all it holds, a `.git` file or link, a `HEAD`."""
        if os.path.isdir(self.aside) and not os.path.islink(self.aside):
            import shutil

            shutil.rmtree(self.aside, ignore_errors=True)
        else:
            os.unlink(self.aside)


def _hold(repository: Repository) -> _Held | None:
    """Move the repository's marker aside (None: it is gone already, or cannot be moved)."""
    entry = repository.entry
    if os.path.basename(entry) != ".git":
        entry = os.path.join(entry, "HEAD")  # a bare repository is one without its HEAD
    held = _Held(entry, f"{entry}-held-by-codecompanion-{os.urandom(4).hex()}")
    try:
        os.rename(held.entry, held.aside)
    except OSError:
        return None
    return held


def _shown(project: Path, entry: str) -> str:
    try:
        return Path(entry).relative_to(project).as_posix()
    except ValueError:
        return entry


async def settle(box: CommandSandbox | None, project: Path, confirm: Confirm) -> str:
    """After a confined command in `project`: hold each repository it made and ask whether to
    keep it; the lines its result gets ("" when it made none)."""
    if box is None or not box.active:
        return ""
    lines = []
    for repository in box.made_repositories(project):
        if repository.entry.startswith("$"):
            continue  # $GIT_DIR is the host's, not something a command makes
        held = _hold(repository)
        if held is None:
            continue
        shown = _shown(project, repository.entry)
        question = (
            f"A command made a git repository at {shown}. Keep it? Git runs the programs its "
            "config names (hooks, core.fsmonitor) whenever you use git there; "
            "if you say no, it is removed."
        )
        if await confirm(question):
            held.restore()
            lines.append(f"note: the command made a git repository at {shown}; the user kept it.")
        else:
            held.discard()
            lines.append(
                f"note: the command made a git repository at {shown}; the user did not keep "
                "it, so it was removed (git's control files are not for commands to write)."
            )
    return "\n".join(lines)
