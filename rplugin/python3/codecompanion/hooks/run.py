"""Running one hook: a command gets the event as JSON on stdin (in the chat's command sandbox,
killed at its timeout), a function gets it as a dict. Either way the answer is a `HookRun`:
the exit code (2 blocks, as in Claude Code), what it printed, and its JSON answer if any.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.runtime.process import run_process
from .table import CallableHook, CommandHook, Hook

if TYPE_CHECKING:
    from ..sandbox.launcher import Launch
    from ..sandbox.process_cap import ProcessCap

log = logging.getLogger("codecompanion.hooks")

BLOCK = 2  # the exit code that blocks (stderr is the reason)
MAX_OUTPUT = 200_000  # bytes kept of each stream


@dataclass(frozen=True)
class HookRun:
    """What one hook did. `failed` is the one line saying why it broke (None: it worked)."""

    label: str
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    answer: dict[str, Any] = field(default_factory=dict)  # its JSON (or dict) answer
    failed: str | None = None
    from_project: bool = False  # a hook of the project's settings files, not the user's


@dataclass(frozen=True)
class Where:
    """Where a command hook runs: the project, its environment, its confinement and the
    chat's process cap (shared with the chat's commands)."""

    cwd: Path
    env: Mapping[str, str]
    confine: Callable[[], Launch | None] = lambda: None
    cap: Callable[[], ProcessCap | None] = lambda: None


async def run_hook(hook: Hook, event: dict[str, Any], where: Where) -> HookRun:
    """Run one hook on one event; whatever happens, one HookRun comes back."""
    try:
        if isinstance(hook, CommandHook):
            return await _command(hook, event, where)
        return await _function(hook, event)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a hook must never break the chat
        log.exception("hook %s failed", hook.label)
        return HookRun(hook.label, failed=f"hook {hook.label} failed: {exc}")


async def _command(hook: CommandHook, event: dict[str, Any], where: Where) -> HookRun:
    env = {**where.env, "CLAUDE_PROJECT_DIR": str(where.cwd)}
    env["CODECOMPANION_PROJECT_DIR"] = str(where.cwd)
    finished = await run_process(
        ["sh", "-c", hook.command],
        cwd=where.cwd,
        timeout=hook.timeout,
        env=env,
        max_output=MAX_OUTPUT,
        stdin_data=json.dumps(event).encode(),
        sandbox=where.confine(),
        cap=where.cap(),
    )
    label = hook.label
    if finished.timed_out:
        return HookRun(label, failed=f"hook {label} timed out after {hook.timeout:g}s: killed")
    if finished.exit_code is None:
        return HookRun(label, failed=f"hook {label} could not start: {finished.stderr}")
    code, out = finished.exit_code, finished.stdout
    failed = None
    if code not in (0, BLOCK):
        said = _first_line(finished.stderr) or _first_line(out) or "no message"
        failed = f"hook {label} exit {code}: {said}"
    answer = _json(out) if code == 0 else {}
    return HookRun(label, code, out, finished.stderr, answer, failed, hook.from_project)


async def _function(hook: CallableHook, event: dict[str, Any]) -> HookRun:
    """Call the function (a coroutine function is awaited, a plain one runs in a thread)."""
    function = hook.function
    try:
        if inspect.iscoroutinefunction(function):
            value = await asyncio.wait_for(function(dict(event)), hook.timeout)
        else:
            value = await asyncio.wait_for(asyncio.to_thread(function, dict(event)), hook.timeout)
    except asyncio.TimeoutError:
        return HookRun(hook.label, failed=f"hook {hook.label} timed out after {hook.timeout:g}s")
    if value is None:
        return HookRun(hook.label)
    if isinstance(value, str):
        return HookRun(hook.label, stdout=value)
    if isinstance(value, Mapping):
        return HookRun(hook.label, answer=dict(value))
    return HookRun(hook.label, failed=f"hook {hook.label} returned {type(value).__name__}")


def _json(text: str) -> dict[str, Any]:
    """The JSON object a hook printed (the whole of stdout), else none."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return {}
    try:
        value = json.loads(stripped)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else ""
