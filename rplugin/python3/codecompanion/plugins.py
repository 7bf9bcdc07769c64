"""Tools and adapters from installed packages, found through entry points (like llm's plugins).

A package declares, in its pyproject.toml:

    [project.entry-points."codecompanion.tools"]
    word_count = "cc_example:word_count"        # a tool, in any form the config file takes

    [project.entry-points."codecompanion.adapters"]
    echo = "cc_example:EchoAdapter"             # a subclass of adapters.http_adapter.HTTPAdapter

The entry point's name is the tool's or the adapter's name. The user's config file wins over a
plugin of the same name, and a plugin never replaces a builtin tool or adapter (it is refused,
and says so). A plugin that fails to load, even one that calls `sys.exit()` or raises
`KeyboardInterrupt` as it is imported, is one line in the log and in :checkhealth; the others
still load and the host lives on.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importlib.metadata (with email, zipfile, csv) costs the host about 1.5 MB
    import importlib.metadata

log = logging.getLogger("codecompanion.plugins")

TOOLS_GROUP = "codecompanion.tools"
# What a plugin's import may raise: SystemExit and KeyboardInterrupt would otherwise end the
# host at every start, naming no plugin.
_LOAD_FAILURES = (Exception, SystemExit, KeyboardInterrupt)
ADAPTERS_GROUP = "codecompanion.adapters"


@dataclass
class Plugins:
    """What the installed packages provide, and one line per entry point that failed."""

    tools: dict[str, Any] = field(default_factory=dict)
    adapters: dict[str, type[Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # "tool:name" → distribution
    errors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the loaded entry points' module files


def _entry_points() -> dict[str, list[importlib.metadata.EntryPoint]]:
    """Our two groups' entry points by name, from one scan of the installed packages."""
    import importlib.metadata

    every = importlib.metadata.entry_points()
    return {
        group: sorted(every.select(group=group), key=lambda ep: ep.name)
        for group in (TOOLS_GROUP, ADAPTERS_GROUP)
    }


def _metadata_folders() -> Iterator[str]:
    """The `*.dist-info`/`*.egg-info` folders on sys.path, where entry points are declared."""
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                yield os.path.join(folder, name)


def may_declare_plugins() -> bool:
    """False only when no installed package can declare a codecompanion entry point.

    Most users install no plugin: then the entry point machinery is not even imported. Anything
    this quick look cannot see (a zip on sys.path, another metadata finder) counts as maybe.
    """
    if any(
        hasattr(finder, "find_distributions") and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return True
    if any(os.path.isfile(entry) for entry in sys.path if entry):
        return True
    for folder in _metadata_folders():
        try:
            with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as file:
                text = file.read()
        except (OSError, ValueError):
            continue
        if TOOLS_GROUP in text or ADAPTERS_GROUP in text:
            return True
    return False


def rescan_site_packages() -> None:
    """See packages installed since the host started: the import system's caches are dropped
    and new `.pth` files (editable installs) add their folders to sys.path."""
    import importlib
    import site
    import sysconfig

    importlib.invalidate_caches()
    for key in ("purelib", "platlib"):
        folder = sysconfig.get_paths().get(key)
        if folder and os.path.isdir(folder):
            site.addsitedir(folder)  # known folders are skipped; new .pth lines are added


def _source(entry: importlib.metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value


def load_plugins(builtin_adapters: Mapping[str, Any] | None = None) -> Plugins:
    """Load every `codecompanion.tools` and `codecompanion.adapters` entry point."""
    from .adapters.http_adapter import HTTPAdapter
    from .tools.builtin import BUILTIN_TOOLS
    from .tools.compat.coerce import coerce

    found = Plugins()
    if not may_declare_plugins():
        return found
    declared = _entry_points()
    for entry in declared[TOOLS_GROUP]:
        try:
            if entry.name in BUILTIN_TOOLS:
                raise ValueError("a builtin tool has this name (refused: rename the entry point)")
            value = entry.load()
            coerce(value.get("callback", value) if _is_entry(value) else value, entry.name)
        except _LOAD_FAILURES as exc:
            found.errors.append(f"plugin tool {entry.name} ({entry.value}): {_why(exc)}")
            continue
        found.tools[entry.name] = value
        found.sources[f"tool:{entry.name}"] = _source(entry)
        found.files += _module_file(entry.module)
    for entry in declared[ADAPTERS_GROUP]:
        try:
            if entry.name in (builtin_adapters or {}):
                raise ValueError("a builtin adapter has this name")
            value = entry.load()
            if not (isinstance(value, type) and issubclass(value, HTTPAdapter)):
                raise TypeError("not a subclass of codecompanion's HTTPAdapter")
        except _LOAD_FAILURES as exc:
            found.errors.append(f"plugin adapter {entry.name} ({entry.value}): {_why(exc)}")
            continue
        found.adapters[entry.name] = value
        found.sources[f"adapter:{entry.name}"] = _source(entry)
        found.files += _module_file(entry.module)
    for line in found.errors:
        log.error("%s", line)
    return found


def _module_file(name: str) -> list[str]:
    """The file of loaded module `name` (the host runs it at every start: commands may not
    write it), or nothing."""
    found = getattr(sys.modules.get(name), "__file__", None)
    return [found] if isinstance(found, str) else []


def _why(exc: BaseException) -> str:
    """One line saying why a plugin failed to load."""
    if isinstance(exc, (SystemExit, KeyboardInterrupt)):
        return f"its import raised {type(exc).__name__}({exc}) (the plugin was skipped)"
    return " ".join(str(exc).split()) or type(exc).__name__


def _is_entry(value: Any) -> bool:
    from .tools.model.registry import is_entry

    return is_entry(value) and "callback" in value
