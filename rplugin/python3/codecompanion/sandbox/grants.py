"""What Landlock grants a command: read everywhere but /dev and the denied paths, the harmless
devices, and "everything but X" spelled as the entries beside X."""

from __future__ import annotations

import os

from . import landlock

# Devices a command may write (and ioctl): the harmless ones. Every other device is read-only
# at most, and terminals are not opened at all (no keystrokes stolen from Neovim's terminal).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

Grant = tuple[str, int]  # a path and the rights beneath it


def around(folder: str, excluded: list[str], rights: int) -> list[Grant]:
    """Grants of `rights` on everything under `folder` except `excluded` (real paths): each
    entry on its own (never a symbolic link), going down into the folders that hold an
    excluded path.

    Landlock only adds rights, so "all but X" is the entries beside X, level by level; the
    folders on the way down get no rule (their own entries can be used, not listed).
    """
    grants: list[Grant] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return grants
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path):
            continue  # a rule would hold its target: where it leads is granted (or not) there
        if any(path == gone or gone.startswith(path.rstrip("/") + "/") for gone in excluded):
            if os.path.isdir(path) and path not in excluded:
                grants += around(path, excluded, rights)
            continue
        grants.append((path, rights))
    return grants


def readable(denied: list[str] | None = None) -> list[Grant]:
    """Read and execute everywhere but /dev (and `denied`, when no mount hides them); in /dev
    only the harmless devices."""
    excluded = ["/dev", *(denied or [])]
    grants = around("/", excluded, landlock.READ_RIGHTS)
    grants.append(("/dev", landlock.READ_DIR))
    device = landlock.READ_FILE | landlock.WRITE_FILE | landlock.IOCTL_DEV | landlock.TRUNCATE
    grants += [(path, device) for path in _DEVICES]
    return grants
