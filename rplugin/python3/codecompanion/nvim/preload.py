"""A chat's first tool round made as quick as its later ones: what it loads, loaded while
Neovim starts.

The first round after the host starts used to import most of the tool machinery (every
builtin, the schema validator library, the orchestrator, checkpoints, the command sandbox) and
compile each tool's argument validator: ~100 ms of CPU between the model's answer and the next
request, against ~10 ms for the same round later. The host does that work when it starts: the
modules before it tells Neovim it is ready (`import_modules`), the validators once it knows the
tools (`preload`, one per turn of the loop: whatever Neovim asks meanwhile waits at most one,
never a thread holding the interpreter). Modules a round loads only for some tools (the web
client, rewinds) stay lazy.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import sys
import time
from collections.abc import Iterator

from ..tools.model.registry import ToolRegistry

log = logging.getLogger(__name__)

# What a first round of file tools or a command imports beyond the builtins' own modules
# (tests/test_preload.py checks that a first round after `preload` imports none).
MODULES = (
    "jsonschema.validators",
    "codecompanion.tools.model.function_tool",
    "codecompanion.tools.runtime.orchestrator",
    "codecompanion.tools.runtime.command_runner",
    "codecompanion.tools.runtime.process",
    "codecompanion.tools.runtime.system",
    "codecompanion.tools.runtime.approvals",
    "codecompanion.checkpoints.manager",
    "codecompanion.checkpoints.session",
    "codecompanion.checkpoints.scan",
    "codecompanion.sandbox.commands",
    "codecompanion.sandbox.standby",
    "codecompanion.sandbox.probe",
    "codecompanion.sandbox.aftermath",
    "codecompanion.sandbox.launcher",
    "codecompanion.sandbox.process_cap",
    "codecompanion.sandbox.mounts",
    "codecompanion.sandbox.rulebook",
    "codecompanion.after_edit.checks",
    "codecompanion.after_edit.diagnostics",
    "codecompanion.subagents.parts",
    "codecompanion.nvim.rewind",
)
BUILTINS = "codecompanion.tools.builtin"


def module_names() -> Iterator[str]:
    """`MODULES`, then every builtin tool's module (as the registry lists them)."""
    yield from MODULES
    package = importlib.import_module(BUILTINS)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield f"{BUILTINS}.{info.name}"


def import_one(name: str) -> bool:
    """Import `name`; False (and a debug line) when it fails: the round that needs it says why."""
    try:
        importlib.import_module(name)
        return True
    except Exception:
        log.debug("preload: %s did not import", name, exc_info=True)
        return False


def import_modules() -> int:
    """Every module of `module_names` imported at once (the host's start, before it says it is
    ready: a chat opened as soon as it is finds them loaded); how many imported."""
    return sum(import_one(name) for name in module_names())


async def preload(registry: ToolRegistry) -> None:
    """Import a tool round's modules (none left after `import_modules`), list the enabled
    tools, compile their validators."""
    began, count = time.process_time(), 0
    for name in module_names():
        if name not in sys.modules:
            count += import_one(name)
            await asyncio.sleep(0)
    names = registry.names()
    for name in names:
        entry = registry.get(name)
        if entry is not None:
            entry.validator()
        await asyncio.sleep(0)
    cpu = (time.process_time() - began) * 1e3
    log.debug("preloaded %d modules, %d tools (%.0f ms of CPU)", count, len(names), cpu)
