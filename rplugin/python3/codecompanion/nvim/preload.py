"""A chat's first tool round made as quick as its later ones: what it loads, loaded as soon as
the chat offers a tool.

The first round after the host starts used to import much of the tool machinery (the command
sandbox's launcher, the after-edit checks, the schema library): ~100 ms of CPU between the
model's answer and the next request, against ~10 ms for the same round later. The builtins'
modules load when the chat first looks a tool up (the registry imports them all); the rest,
`MODULES`, when a chat first offers a tool (`@{read_file}` in the message being sent, a restored
or demo chat's tools), while that request waits on the model, one module per turn of the loop
(whatever Neovim asks meanwhile waits at most one module, never a thread holding the
interpreter).

A chat without tools imports none of them (~1.3 MiB of a plain chat's host), and no round whose
arguments are plainly valid imports the schema library (jsonschema, ~5 MiB and ~40 ms of CPU;
`plainly_valid` in tools/model/arguments.py). Modules a round loads only for some calls (the
web client, rewinds) stay lazy.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
import time

log = logging.getLogger(__name__)

# What a first round of file tools or a command imports beyond the builtins' modules (the
# registry's) and what a chat loads when it opens (tests/host/test_preload.py checks that a first
# round after `preload` imports none).
MODULES = (
    "codecompanion.tools.model.function_tool",
    "codecompanion.tools.model.short_schema",
    "codecompanion.tools.runtime.orchestrator",
    "codecompanion.tools.runtime.command_runner",
    "codecompanion.tools.runtime.process",
    "codecompanion.tools.runtime.system",
    "codecompanion.tools.runtime.approvals",
    "codecompanion.tools.runtime.shell_rules",
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
    "codecompanion.after_edit.printed",
    "codecompanion.subagents.parts",
    "codecompanion.nvim.rewind",
)


def import_one(name: str) -> bool:
    """Import `name`; False (and a debug line) when it fails: the round that needs it says why."""
    try:
        importlib.import_module(name)
        return True
    except Exception:
        log.debug("preload: %s did not import", name, exc_info=True)
        return False


async def preload() -> None:
    """Import the modules of `MODULES` not loaded yet, one per turn of the loop."""
    began, count = time.process_time(), 0
    for name in MODULES:
        if name not in sys.modules:
            count += import_one(name)
            await asyncio.sleep(0)
    if count:
        cpu = (time.process_time() - began) * 1e3
        log.debug("preloaded %d modules (%.0f ms of CPU)", count, cpu)
