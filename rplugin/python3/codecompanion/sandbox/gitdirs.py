"""Git's control files in a project, wherever git would find them.

Git reads config, hooks and attributes (and so runs the programs they name: `core.fsmonitor`,
hooks, filters) from more places than `<project>/.git`: a nested repository's `.git`, the folder
a `.git` *file* points to (`gitdir: …`, as `--separate-git-dir`, worktrees and submodules write
it) and that folder's `commondir`, a bare repository's own folder (`HEAD`, `objects/`, `refs/`:
the `.bare` layout, a `repo.git` clone), and `$GIT_DIR`. A command that writes any of them has
git run its program the next time the user (or a shell prompt) runs git there, outside the
sandbox. The walk finds them all (below dependency and cache folders it looks only one level
deep: see SHALLOW); it is kept, and refreshed by re-reading only the folders whose
modification time changed (an entry made, removed or renamed in a folder changes it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

_POINTER_BYTES = 4096  # a `.git` file holds one short line
# Folders of dependencies and caches that tools rebuild and nobody runs git in: their own entries
# are read (a `.git` there is found) but not the folders below them, so that keeping the walk
# up to date costs a `stat` per folder of the project's own code, not of its dependencies.
SHALLOW = frozenset(
    {
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".direnv",
        ".gradle",
        ".next",
        ".terraform",
    }
)
_ENV_PLACES = ("GIT_DIR", "GIT_COMMON_DIR")


@dataclass(frozen=True)
class Repository:
    """One place git finds a repository: `entry` (a `.git` folder, file or link, a bare folder,
    or `$GIT_DIR`) and the real paths a command must not write for it."""

    entry: str
    places: tuple[str, ...]


@dataclass(frozen=True)
class _Folder:
    """What one read of a folder found: its mtime, its subfolders, its repositories, and the
    `.git` files read (with their mtime, so that a changed pointer is read again)."""

    mtime: int
    subfolders: tuple[str, ...]
    repositories: tuple[Repository, ...]
    pointers: tuple[tuple[str, int], ...]


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return None


def _pointer(dotgit: str) -> str | None:
    """The folder a `.git` file names (`gitdir: <path>`, relative to the file's folder), real."""
    try:
        fd = os.open(dotgit, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a FIFO or device named .git is never read
        head = os.read(fd, _POINTER_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    line = head.split(b"\n", 1)[0].strip()
    if not line.startswith(b"gitdir:"):
        return None
    target = os.fsdecode(line[len(b"gitdir:") :].strip())
    folder = os.path.dirname(dotgit)
    return os.path.realpath(os.path.join(folder, target)) if target else None


def _common(gitdir: str) -> str | None:
    """The shared repository a worktree's git folder names in its `commondir` file, real."""
    path = os.path.join(gitdir, "commondir")
    try:
        with open(path, "rb") as file:
            line = file.read(_POINTER_BYTES).split(b"\n", 1)[0].strip()
    except OSError:
        return None
    return os.path.realpath(os.path.join(gitdir, os.fsdecode(line))) if line else None


def _dotgit(path: str, kind: int) -> Repository:
    """The repository a `.git` entry of kind `kind` (stat mode) makes git find."""
    places = [os.path.realpath(path)] if not stat.S_ISREG(kind) else [path]
    if stat.S_ISLNK(kind):
        places.insert(0, path)  # the link itself: replacing it would point git elsewhere
    target = _pointer(path) if stat.S_ISREG(kind) else places[-1]
    if target is not None and target not in places:
        places.append(target)
    common = _common(target) if target is not None else None
    if common is not None and common not in places:
        places.append(common)
    return Repository(path, tuple(places))


def _kinds(folder: str) -> dict[str, int]:
    """Each entry's type as a stat mode's type bits, from the folder's listing alone (no stat
    of every file; a `.git` entry is stat'ed for what it is)."""
    kinds: dict[str, int] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name == ".git":
                kinds[entry.name] = entry.stat(follow_symlinks=False).st_mode
            elif entry.is_dir(follow_symlinks=False):
                kinds[entry.name] = stat.S_IFDIR
            elif entry.is_file(follow_symlinks=False):
                kinds[entry.name] = stat.S_IFREG
    return kinds


def _is_git_folder(kinds: Mapping[str, int]) -> bool:
    """True when a folder's entries make it a git folder on its own: `HEAD`, and `objects/`
    with `refs/` (a bare repository) or a `commondir` file (a worktree's git folder)."""
    if not stat.S_ISREG(kinds.get("HEAD", 0)):
        return False
    has_store = stat.S_ISDIR(kinds.get("objects", 0)) and stat.S_ISDIR(kinds.get("refs", 0))
    return has_store or stat.S_ISREG(kinds.get("commondir", 0))


def read_folder(folder: str) -> _Folder | None:
    """One folder's subfolders and repositories (None: it cannot be read)."""
    mtime = _mtime(folder)
    try:
        kinds = _kinds(folder)
    except OSError:
        return None
    if mtime is None:
        return None
    if _is_git_folder(kinds):  # a bare repository: git reads it all; nothing below to walk
        return _Folder(mtime, (), (Repository(folder, (os.path.realpath(folder),)),), ())
    repositories: tuple[Repository, ...] = ()
    pointers: tuple[tuple[str, int], ...] = ()
    kind = kinds.pop(".git", None)
    if kind is not None:
        dotgit = os.path.join(folder, ".git")
        repositories = (_dotgit(dotgit, kind),)
        if stat.S_ISREG(kind):
            pointers = ((dotgit, _mtime(dotgit) or 0),)
    shallow = os.path.basename(folder) in SHALLOW
    subfolders = tuple(
        os.path.join(folder, name)
        for name, mode in sorted(kinds.items())
        if stat.S_ISDIR(mode) and not shallow
    )
    return _Folder(mtime, subfolders, repositories, pointers)


class GitWalk:
    """One project's repositories: walked once, then kept up to date folder by folder."""

    def __init__(self, root: str, env: Mapping[str, str] | None = None) -> None:
        self.root = os.path.realpath(root)
        self._env = dict(os.environ if env is None else env)
        self._folders: dict[str, _Folder] = {}

    def repositories(self) -> tuple[Repository, ...]:
        """Every repository git finds in the project (and `$GIT_DIR`), as the files are now."""
        if not self._folders:
            self._walk(self.root)
        else:
            self._refresh()
        found = [repo for folder in self._folders.values() for repo in folder.repositories]
        found += _from_environment(self._env)
        return tuple(sorted(set(found), key=lambda repo: repo.entry))

    def places(self, repositories: tuple[Repository, ...] | None = None) -> tuple[str, ...]:
        """The real paths no command may write (of `repositories`, found now when None),
        outermost only, with `<project>/.git` also while it does not exist."""
        found = self.repositories() if repositories is None else repositories
        return outermost(
            [place for repo in found for place in repo.places] + [os.path.join(self.root, ".git")]
        )

    def _refresh(self) -> None:
        for folder, seen in list(self._folders.items()):
            if folder not in self._folders:
                continue  # its parent's read dropped it meanwhile
            if _mtime(folder) != seen.mtime or any(
                _mtime(path) != when for path, when in seen.pointers
            ):
                self._walk(folder)

    def _walk(self, top: str) -> None:
        """Read `top` again and every folder below it that is new or was never read."""
        stack = [top]
        while stack:
            folder = stack.pop()
            before = self._folders.get(folder)
            found = read_folder(folder)
            if found is None:
                self._drop(folder)
                continue
            self._folders[folder] = found
            gone = set(before.subfolders if before else ()) - set(found.subfolders)
            for old in gone:
                self._drop(old)
            stack += [sub for sub in found.subfolders if sub not in self._folders]

    def _drop(self, folder: str) -> None:
        prefix = folder.rstrip("/") + "/"
        for known in [k for k in self._folders if k == folder or k.startswith(prefix)]:
            del self._folders[known]


class GitWalks:
    """A chat's walks: its project's is kept (commands and file tools share it), any other
    folder's (code_runner's own, say) is walked anew."""

    def __init__(self, project: str | None) -> None:
        self.project = os.path.realpath(project) if project is not None else None
        self._kept: GitWalk | None = None

    def of(self, root: str) -> GitWalk:
        """The walk of `root`."""
        real = os.path.realpath(root)
        if real != self.project:
            return GitWalk(real)
        if self._kept is None:
            self._kept = GitWalk(real)
        return self._kept


def _from_environment(env: Mapping[str, str]) -> list[Repository]:
    """The git folders the host's environment names: git uses them wherever the user runs it."""
    found = []
    for name in _ENV_PLACES:
        value = env.get(name)
        if value:
            path = os.path.realpath(os.path.expanduser(value))
            found.append(Repository(f"${name}", (path,)))
    return found


def outermost(paths: list[str]) -> tuple[str, ...]:
    """`paths` without duplicates and without those inside another of them."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(path.startswith(outer.rstrip("/") + "/") for outer in kept):
            kept.append(path)
    return tuple(kept)
