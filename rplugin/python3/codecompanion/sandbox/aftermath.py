"""After a confined command: what it made that something outside the sandbox would run.

Landlock cannot refuse one name in a folder a command may write, and a bind mount cannot stand
on a path that does not exist yet. So two things a command can make are looked for as soon as
it ends:

- a repository git would find (`git init`, a `.git` file pointing anywhere, a bare
  repository's `HEAD`, `objects/` and `refs/`; see gitdirs.GitWalk): the config it wrote would
  run its programs the next time the user, or a shell prompt, runs git there. It is moved
  aside at once (the `.git` renamed, a bare repository's `HEAD` renamed) and the user is asked,
  in every mode, whether to keep it: kept, it goes back and is read-only for the next commands;
  not kept, it is removed.
- a file the host runs that did not exist before (its config file, which `:CodeCompanionReload`
  would run): renamed aside, unasked, since only the user writes it.
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


def _aside(path: str) -> str:
    return f"{path}-held-by-codecompanion-{os.urandom(4).hex()}"


def _hold(repository: Repository) -> _Held | None:
    """Move the repository's marker aside (None: it is gone already, or cannot be moved)."""
    entry = repository.entry
    if os.path.basename(entry) != ".git":
        entry = os.path.join(entry, "HEAD")  # a bare repository is one without its HEAD
    held = _Held(entry, _aside(entry))
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


def _set_aside(paths: list[str]) -> list[str]:
    """Rename each file the host runs that a command made; one line each for the result."""
    lines = []
    for path in paths:
        moved = _aside(path)
        try:
            os.rename(path, moved)
        except OSError:
            continue
        lines.append(
            f"note: the command made {path}, a file the plugin itself runs; it was renamed to "
            f"{os.path.basename(moved)} so that nothing runs it (only the user writes it)."
        )
    return lines


async def _ask_about(project: Path, repository: Repository, confirm: Confirm) -> str | None:
    """Hold one repository a command made and ask whether to keep it; the line for the result."""
    held = _hold(repository)
    if held is None:
        return None
    shown = _shown(project, repository.entry)
    question = (
        f"A command made a git repository at {shown}. Keep it? Git runs the programs its "
        "config names (hooks, core.fsmonitor) whenever you use git there; "
        "if you say no, it is removed."
    )
    if await confirm(question):
        held.restore()
        return f"note: the command made a git repository at {shown}; the user kept it."
    held.discard()
    return (
        f"note: the command made a git repository at {shown}; the user did not keep it, so it "
        "was removed (git's control files are not for commands to write)."
    )


async def settle(box: CommandSandbox | None, project: Path, confirm: Confirm) -> str:
    """After a confined command in `project`: set aside the host's files it made, hold each
    repository it made and ask whether to keep it; the lines its result gets ("" for none)."""
    if box is None or not box.active:
        return ""
    lines = _set_aside(box.made_host_files())
    for repository in box.made_repositories(project):
        if not repository.entry.startswith("$"):  # $GIT_DIR is the host's own
            line = await _ask_about(project, repository, confirm)
            lines += [line] if line else []
    return "\n".join(lines)
