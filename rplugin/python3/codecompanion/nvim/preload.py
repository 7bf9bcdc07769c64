"""A chat's first tool round made as quick as its later ones: what it loads, loaded while
Neovim starts.

The first round after the host starts used to import most of the tool machinery (every
builtin, the schema validator library, the runner, checkpoints, the command sandbox) and
compile each tool's argument validator: ~100 ms of CPU between the model's answer and the next
request, against ~10 ms for the same round later. `preload` does that work when the host
starts, in a worker thread (imports, validators) and on the loop (the registry's entries, and
a user's `enabled` functions, are the loop's), so a chat finds it done. Modules a round loads
only for some tools (the web client, rewinds) stay lazy.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import Iterable

from ..tools.model.registry import ToolEntry, ToolRegistry

log = logging.getLogger(__name__)

# What a first round of file tools or a command imports beyond the builtins' own modules
# (tests/nvim/test_preload.py checks that a first round after `preload` imports none).
MODULES = (
    "jsonschema.validators",
    "codecompanion.tools.model.function_tool",
    "codecompanion.tools.runtime.runner",
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
    "codecompanion.sandbox.mounts",
    "codecompanion.sandbox.rulebook",
    "codecompanion.after_edit.checks",
    "codecompanion.after_edit.diagnostics",
    "codecompanion.subagents.parts",
    "codecompanion.nvim.rewind",
)


def import_all(names: Iterable[str] = MODULES) -> int:
    """The builtins and `names` imported, skipping any that fails (the round that needs it
    reports why); how many imported."""
    from ..tools.builtin import load_builtins

    done = len(load_builtins(lambda _: None)[0])
    for name in names:
        try:
            importlib.import_module(name)
            done += 1
        except Exception:
            log.debug("preload: %s did not import", name, exc_info=True)
    return done


def compile_validators(entries: Iterable[ToolEntry]) -> None:
    """Each entry's argument validator, compiled and kept on the entry."""
    for entry in entries:
        entry.validator()


async def preload(registry: ToolRegistry) -> None:
    """Load a tool round's modules, list the enabled tools, compile their validators."""
    began = time.process_time()
    count = await asyncio.to_thread(import_all)
    entries = [registry.get(name) for name in registry.names()]
    await asyncio.to_thread(compile_validators, [e for e in entries if e is not None])
    log.debug(
        "preloaded %d modules, %d tools (%.0f ms of CPU)",
        count,
        len(entries),
        (time.process_time() - began) * 1e3,
    )
