"""The environment tool processes get: the host's, without keys, tokens and Neovim's socket.

A command the model runs must not see provider keys (`env | sort` would put them in the chat,
the saved chat and the next request) nor `$NVIM`, the RPC socket through which a command could
drive the editor and answer its own approval. `opts.tool_system.env` adds names to drop
(`drop`) or passes ones that would be dropped (`pass`); Neovim's socket is never passed.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Names that look like a secret: a word KEY with API/ACCESS/PRIVATE/SECRET before it, or a word
# TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIALS, AUTH anywhere (OPENAI_API_KEY, GITHUB_TOKEN,
# AWS_SECRET_ACCESS_KEY, HF_TOKEN, NPM_AUTH, DB_PASSWORD, GOOGLE_APPLICATION_CREDENTIALS).
SECRET_NAME = re.compile(
    r"(^|_)((API|ACCESS|PRIVATE|SECRET|SIGNING|ENCRYPTION|MASTER|LICENSE)_?KEYS?|APIKEY|"
    r"TOKENS?|SECRETS?|PASSWORDS?|PASSWD|PASS|CREDENTIALS?|AUTH|COOKIE|SESSION_?KEY)"
    r"(_|$)",
    re.IGNORECASE,
)
# Neovim's RPC socket: never passed, whatever the config says.
EDITOR_SOCKETS = frozenset({"NVIM", "NVIM_LISTEN_ADDRESS"})
# Kept although the name has AUTH in it: the ssh agent's socket (git over ssh needs it).
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK"})
# Marks every process a tool run starts, so the run's descendants can be found and killed.
RUN_MARKER = "CODECOMPANION_TOOL_RUN"


@dataclass(frozen=True)
class EnvPolicy:
    """Which variables tool processes do not get: `drop` more, `keep` some that would go."""

    drop: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    @classmethod
    def from_opts(cls, value: Any) -> EnvPolicy:
        """From `opts.tool_system.env`: `{"drop": [...], "pass": [...]}` (fnmatch patterns).

        `keys` (the chat's builder fills it in: Workspace.tool_system) names the variables the
        builtin and configured adapters read keys from. Those are never passed, `pass` or not.
        """
        value = value if isinstance(value, Mapping) else {}
        keys = _names(value.get("keys"))
        return cls(
            drop=(*keys, *_names(value.get("drop"))), keep=_names(value.get("pass")), keys=keys
        )

    def dropped(self, name: str) -> bool:
        """True if a tool process must not get the variable `name`."""
        if name in EDITOR_SOCKETS or name in self.keys or name.startswith(RUN_MARKER):
            return True
        keep, drop = _matcher(self.keep), _matcher(self.drop)
        if keep is not None and keep.match(name):
            return False
        if drop is not None and drop.match(name):
            return True
        return name not in _NOT_SECRET and SECRET_NAME.search(name) is not None

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) without the dropped variables."""
        if base is None:  # the same environment is filtered once, however many tools start
            return dict(_kept(self, tuple(os.environ.items())))
        return {k: v for k, v in base.items() if not self.dropped(k)}


@functools.lru_cache(maxsize=8)
def _kept(policy: EnvPolicy, items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The variables of `items` a tool process gets under `policy` (keyed by every name and
    value, so a changed environment is filtered anew)."""
    return tuple((name, value) for name, value in items if not policy.dropped(name))


@functools.lru_cache(maxsize=64)
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex matching what any of the fnmatch `patterns` matches (case-sensitive).

    Every tool process's environment is filtered through these: one match per variable
    instead of one per variable and pattern.
    """
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in patterns))


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        return tuple(str(item) for item in value if isinstance(item, str) and item)
    return ()
