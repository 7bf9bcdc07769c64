"""Running git so that it starts no program the repository or the user's git config names.

Tools run git without asking, and a repository (or a model that edited its files) can configure
programs git would start on its own: hooks, filter drivers (`filter.<x>.clean`/`.process`, chosen
by `.gitattributes`), diff and textconv drivers, `core.fsmonitor`, pagers, ssh commands,
credential helpers. So tools only run git commands that read the index and the object store
(`ls-files`, `cat-file`, `rev-parse`, `diff --cached`), never one that reads work-tree files
through filters or writes the index, and they run them with:

- no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`) and none of
  the caller's `GIT_*` variables (they can inject config, an external diff or an ssh command);
- `-c` overrides for what the repository's own config could still name: hooks, fsmonitor, pager;
- `--no-ext-diff --no-textconv` on diffs, no optional locks (the index is never rewritten, so
  the `post-index-change` hook has nothing to run on), no network transports.

The work tree is compared with the index in Python (see worktree_diff), never by git.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ...runtime.process import FinishedProcess, run_process

# Config that the repository's .git/config could set to a program; `-c` wins over it.
_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.quotepath=off",
    "core.untrackedCache=false",
    "protocol.allow=never",
)
GIT = ("git", *(arg for pair in _OVERRIDES for arg in ("-c", pair)), "--no-pager")
# Set for every git call; every other GIT_* variable of the caller is dropped.
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_NO_REPLACE_OBJECTS": "1",
}
# Diff options that keep git's own diff machinery (no external diff, no textconv program).
DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv")


def git_environment(base: Mapping[str, str]) -> dict[str, str]:
    """`base` without any GIT_* variable, plus the settings that keep git from running programs."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.update(_ENV)
    return env


async def run_git(
    root: Path,
    argv: tuple[str, ...],
    *,
    timeout: float,
    env: Mapping[str, str],
    max_output: int = 16_000_000,
    stdin_data: bytes | None = None,
) -> FinishedProcess:
    """Run `git <argv>` in `root` with the safe options; `env` is the tool's child environment."""
    return await run_process(
        [*GIT, *argv],
        cwd=root,
        timeout=timeout,
        env=git_environment(env),
        max_output=max_output,
        stdin_data=stdin_data,
    )


# Files through which a repository makes git run programs (filters, hooks, submodule commands).
_CONTROL_FILES = frozenset({".gitattributes", ".gitmodules"})


async def hooks_folder(root: Path) -> Path | None:
    """The folder the repository's own config names as `core.hooksPath`, resolved; else None.

    Files there are hooks git runs on the user's next commit, like those in `.git/hooks`.
    """
    if _plainly_no_hooks_path(Path(os.path.realpath(root))):
        return None
    from ...runtime.child_env import EnvPolicy

    env = EnvPolicy().environment()
    top = await run_git(root, ("rev-parse", "--show-toplevel"), timeout=10, env=env)
    # `--local`: the repository's own file; the `-c core.hooksPath=/dev/null` of GIT applies
    # to the command line only, not to what `config --local` reads.
    value = await run_git(
        root, ("config", "--local", "--get", "core.hooksPath"), timeout=10, env=env
    )
    folder, base = value.stdout.strip(), top.stdout.strip()
    if value.exit_code != 0 or top.exit_code != 0 or not folder or not base:
        return None
    return Path(os.path.realpath(os.path.join(base, os.path.expanduser(folder))))


def _plainly_no_hooks_path(root: Path) -> bool:
    """True when the files alone show git would find no `core.hooksPath` for `root`.

    This spares every write two git processes. It answers only the plain cases and leaves
    everything else to git: no repository at all (no `.git` and no bare repository in `root` or
    above), or a `.git` folder whose own config file never mentions hooksPath (git's names are
    ASCII and case-insensitive; `--local` reads that one file). A `.git` file (worktrees,
    submodules), a config that includes others, or anything unusual goes to git.
    """
    for folder in (root, *root.parents):
        dotgit = folder / ".git"
        if os.path.lexists(dotgit):
            return _config_lacks_hooks_path(dotgit)
        if os.path.lexists(folder / "HEAD") and os.path.lexists(folder / "objects"):
            return False  # maybe a bare repository: git decides
    return True


def _config_lacks_hooks_path(dotgit: Path) -> bool:
    """True if `dotgit` is a plain `.git` folder whose config file does not name hooksPath."""
    config = dotgit / "config"
    plain = (
        not dotgit.is_symlink()
        and dotgit.is_dir()
        and (dotgit / "HEAD").is_file()
        and (dotgit / "objects").is_dir()
        and not os.path.lexists(dotgit / "commondir")
        and not config.is_symlink()
        and config.is_file()
    )
    if not plain:
        return False
    try:
        text = config.read_bytes().lower()
    except OSError:
        return False
    return b"hookspath" not in text and b"include" not in text


def in_git_folder(tools: object, root: Path, path: Path) -> bool:
    """True if the resolved `path` is, or is inside, a place git finds a repository in the
    project by: a nested repository's `.git`, the folder a `.git` file points to, a bare
    repository (see sandbox/gitdirs.py; the chat's sandbox keeps the walk up to date)."""
    from ....sandbox.gitdirs import GitWalk, GitWalks

    walks = getattr(getattr(tools, "sandbox", None), "git_walks", None)
    walk = walks.of(str(root)) if isinstance(walks, GitWalks) else GitWalk(str(root))
    for place in walk.places():
        if path == Path(place) or Path(place) in path.parents:
            return True
    return False


def controls_git(root: Path, path: Path) -> bool:
    """True if `path` (below `root`) is in a `.git` folder or is a .gitattributes/.gitmodules."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = path.parts
    names = [part.casefold() for part in parts]
    return ".git" in names or (bool(names) and names[-1] in _CONTROL_FILES)
