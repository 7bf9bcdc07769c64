"""Where the user's configuration and the plugin's own files are, and whether the chat's folder
is a project at all.

Neovim started from `~` (or `/`) opens a chat whose folder holds the user's shell and editor
configuration, the plugin's config file, saved chats and checkpoints: a command allowed to
write "the project" there could write all of them, and the next shell, Neovim or host would run
what it planted. Such a folder is not a project: the sandbox then lets commands read it but
write only their private temp folder (and `writable`), and says why. Wherever they are, the
configuration folders and the plugin's own folders are read-only for commands, as are the files
the host runs (its config file, the Python files that file imports, plugins' modules).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _inside(path: str, folder: str) -> bool:
    """True when `path` is `folder` or below it (both real)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _shown(path: str, home: str) -> str:
    return "~" + path[len(home) :] if _inside(path, home) and home != "/" else path


@dataclass(frozen=True)
class UserPlaces:
    """The user's home and configuration folders, the plugin's own folders and the files the
    host runs (real paths; present or not)."""

    home: str
    config: tuple[str, ...]  # $XDG_CONFIG_HOME (~/.config), Neovim's config folder
    plugin: tuple[str, ...]  # the plugin's data folder (chats, checkpoints), its log folder
    host_files: tuple[str, ...] = ()  # the config file, what it imports, plugins' modules

    @classmethod
    def find(
        cls,
        env: Mapping[str, str],
        nvim_config: str | None,
        plugin: Iterable[str],
        host_files: Iterable[str] = (),
    ) -> UserPlaces:
        """The places for this environment (`~` from $HOME) and the folders Neovim named."""
        home = _real(env.get("HOME") or os.path.expanduser("~"))
        config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        if nvim_config is None:
            nvim_config = os.path.join(config_home, env.get("NVIM_APPNAME") or "nvim")
        return cls(
            home=home,
            config=tuple(dict.fromkeys(_real(p) for p in (config_home, nvim_config))),
            plugin=tuple(dict.fromkeys(_real(p) for p in plugin)),
            host_files=tuple(dict.fromkeys(_real(p) for p in host_files)),
        )

    def read_only(self) -> tuple[str, ...]:
        """What no command may write, wherever it is."""
        return (*self.config, *self.plugin, *self.host_files)

    def not_a_project(self, folder: str) -> str | None:
        """Why commands may not write `folder` as a project (None: they may)."""
        real = _real(folder)
        if real == "/":
            return "/ is the whole system, not a project"
        if _inside(self.home, real):
            what = "your home folder" if real == self.home else f"a folder holding {self.home}"
            return f"{_shown(real, self.home)} is {what}, not a project"
        for place in (*self.config, *self.plugin):
            if _inside(place, real):
                return f"{_shown(real, self.home)} holds {_shown(place, self.home)}"
            if _inside(real, place):
                return f"{_shown(real, self.home)} is inside {_shown(place, self.home)}"
        return None
