"""Paths that hold secrets: the sandbox's deny list, and names that look like a credential.

Commands never read the deny list's paths (they are hidden); text the plugin reads into a
request itself (rules files' imports, `/file`, `/image`) must not read them either, nor a file
named like a credential wherever it is (`~/.codex/auth.json`, `~/.claude/.credentials.json`,
a key in the project, a `.env`), also when it is reached through a link with another name.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

# Names (matched without regard to case) of files that hold credentials.
CREDENTIAL_NAMES = (
    "*credentials*",
    "auth.json",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "id_*",
    ".env",
    ".env.*",
    "*.env",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    "*token*.json",
    "*secret*.json",
    "*secrets.*",
)


def credential_name(name: str) -> bool:
    """True when a file called `name` looks like it holds a credential."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in CREDENTIAL_NAMES)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def why_secret(path: str, deny_read: Iterable[str], shown: str | None = None) -> str | None:
    """Why the file at `path` may not be read into a request (None: it may), checked on the
    path as given and on its real path (a link with an innocent name to a key is refused)."""
    real = os.path.realpath(path)
    name = shown or path
    for denied in deny_read:
        folder = os.path.realpath(os.path.expanduser(denied))
        if _inside(real, folder) or _inside(os.path.abspath(path), folder):
            return f"{name} is in {denied}, which holds secrets (the sandbox's deny list)"
    for candidate in (path, real):
        if credential_name(os.path.basename(candidate)):
            return f"{name} looks like a credential file ({os.path.basename(candidate)})"
    return None
