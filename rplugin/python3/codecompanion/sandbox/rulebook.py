"""The rules a chat's commands are confined by, worked out again only when what they depend on
changed.

Working them out lists `/`, resolves each protected and denied path and builds Landlock's
grants: about half a millisecond before every command. What they depend on is the boundary
(the settings, the project) and a few places on disk: the entries of `/`, and whether each
protected or denied path exists and what it is. A command whose boundary is the same and whose
places look the same (one `stat` each) gets the same rules; any change works them out anew, so
a `.git` or a secret that appears is protected from the next command on, as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import grants as landlock_grants
from . import landlock, mounts, seccomp
from .gitdirs import outermost
from .settings import Permissions
from .standby import Rules

# What `stat` says of a place (device, inode, type and mode, and for `/` its entries' mtime),
# None when it does not exist.
Mark = tuple[int, int, int, int] | None


@dataclass(frozen=True)
class Boundary:
    """What a sandboxed command may do, for one project."""

    project: Path
    permissions: Permissions
    read_only: tuple[str, ...] = ()  # the plugin's files, git's control files (gitdirs.py)
    network: bool = False  # this run may use the network (settings or a per-command approval)
    writable_project: bool = True  # False: the folder is no project (see user_places.py)

    def roots(self) -> tuple[str, ...]:
        """The folders commands may write (besides their private temp)."""
        extra = tuple(os.path.expanduser(p) for p in self.permissions.writable)
        return ((str(self.project),) if self.writable_project else ()) + extra


def rules(boundary: Boundary, abi: int, view: mounts.MountView | None) -> Rules:
    """What confines a command within `boundary` (the private temp folder aside): Landlock's
    grants, the mount view's lists (None: Landlock alone), the no-network filter."""
    roots = boundary.roots()
    if view is not None:  # read-only mounts take .git back, tmpfs hides the denied paths
        grants = landlock_grants.readable()
        grants += [(path, landlock.WRITE_RIGHTS) for path in roots]
    else:  # Landlock alone: every entry beside them (no new file at such a root's top level)
        grants = landlock_grants.readable(_existing(boundary.permissions.deny_read))
        kept = standing(_protected(boundary), roots)
        for root in roots:
            real = os.path.realpath(root)
            if any(_within(path, real) for path in kept):
                grants += landlock_grants.around(real, kept, landlock.WRITE_RIGHTS)
            else:
                grants.append((root, landlock.WRITE_RIGHTS))
    handled = landlock.handled_fs(abi)
    network = boundary.network or boundary.permissions.network
    return Rules(
        grants=tuple((path, rights & handled) for path, rights in grants),
        temp_rights=landlock.WRITE_RIGHTS & handled,
        ruleset=landlock.ruleset_attr(abi, deny_tcp=not network, scoped=True),
        program=None if network else seccomp.no_network_program(),
        read_only=view.read_only if view is not None else (),
        hidden_dirs=view.hidden_dirs if view is not None else (),
        hidden_files=view.hidden_files if view is not None else (),
    )


def view_of(boundary: Boundary) -> mounts.MountView:
    """The command's mount view within `boundary`, as the files are now."""
    roots = boundary.roots()
    protected = standing(_protected(boundary), roots)
    return mounts.plan(protected, list(boundary.permissions.deny_read), roots)


def _protected(boundary: Boundary) -> list[str]:
    own = [os.path.join(str(boundary.project), ".git"), *boundary.read_only]
    return list(outermost(own))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def standing(paths: Iterable[str], roots: Iterable[str]) -> list[str]:
    """What keeps each of `paths` from being written, as the files are now (real paths): the
    path itself when it exists; when it does not, the nearest folder above it that exists
    inside a writable root (nothing when that is the root itself: a name cannot be kept from
    being made there, see aftermath.py)."""
    real_roots = [os.path.realpath(os.path.expanduser(root)) for root in roots]
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(os.path.expanduser(path))
        if os.path.lexists(real):
            found.append(real)
            continue
        above = os.path.dirname(real)
        while not os.path.lexists(above) and above != "/":
            above = os.path.dirname(above)
        if any(_within(above, root) and above != root for root in real_roots):
            found.append(above)
    return list(outermost(found))


@dataclass(frozen=True)
class _Made:
    """Rules worked out, and the marks of the places they depend on at that time."""

    boundary: Boundary
    abi: int
    places: tuple[str, ...]  # "/" first, then the protected and the denied paths
    marks: tuple[Mark | str, ...]
    rules: Rules
    view: mounts.MountView


class RuleBook:
    """One chat's rules, kept while nothing they depend on changes."""

    def __init__(self) -> None:
        self._made: _Made | None = None

    def rules(
        self, boundary: Boundary, abi: int, with_mounts: bool
    ) -> tuple[Rules, mounts.MountView | None]:
        """The rules and mount view for `boundary` as the files are now."""
        if not with_mounts:  # Landlock alone: the grants list the project's own entries
            return rules(boundary, abi, None), None
        made = self._made
        if made is not None and (made.boundary, made.abi) == (boundary, abi):
            if _marks(made.places, boundary) == made.marks:
                return made.rules, made.view
        denied = (os.path.expanduser(path) for path in boundary.permissions.deny_read)
        places = ("/", *_protected(boundary), *denied)
        marks = _marks(places, boundary)  # before the rules: a change meanwhile shows next time
        view = view_of(boundary)
        self._made = _Made(boundary, abi, places, marks, rules(boundary, abi, view), view)
        return self._made.rules, view


def _marks(places: tuple[str, ...], boundary: Boundary) -> tuple[Mark | str, ...]:
    """Each place's mark, then what stands for the protected paths that do not exist (the
    folder above them that a command could otherwise fill)."""
    marks: list[Mark | str] = [_mark(p, entries=index == 0) for index, p in enumerate(places)]
    return (*marks, *standing(_protected(boundary), boundary.roots()))


def _mark(place: str, entries: bool) -> Mark:
    try:
        found = os.stat(place)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_mode, found.st_mtime_ns if entries else 0)


def _existing(paths: Iterable[str]) -> list[str]:
    """The real paths of those that exist (`~` expanded)."""
    found = (os.path.realpath(os.path.expanduser(path)) for path in paths)
    return [path for path in found if os.path.lexists(path)]
