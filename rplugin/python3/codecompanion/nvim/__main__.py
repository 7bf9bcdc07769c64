"""The host process Lua starts: `python -m codecompanion.nvim` (RPC over stdio)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import types
from typing import Any

from .. import priority
from .logsetup import setup_logging


def skip_httpx_cli() -> None:
    """Stand in for httpx's command-line module before httpx loads.

    httpx imports its CLI (click, rich and pygments, about 2 MB) whenever those are installed,
    and they are (other dependencies bring them); the host never runs it.
    """
    if "httpx" not in sys.modules:
        stub = types.ModuleType("httpx._main")
        stub.__dict__["main"] = lambda: None
        sys.modules.setdefault("httpx._main", stub)


def main() -> int:
    """Attach to Neovim over stdio and serve until it closes the channel."""
    skip_httpx_cli()
    setup_logging()
    log = logging.getLogger("codecompanion.nvim")
    # Before the imports: they are most of the start's CPU, and at another priority than the
    # editor's a busy machine can hold them back for seconds.
    outcome = priority.follow_editor(os.getppid(), priority.host_offset())
    import pynvim

    from .app import App
    from .bridge import Bridge

    nvim = pynvim.attach("stdio")
    if outcome == "busy":
        _follow_editor(nvim.loop)
    bridge = Bridge(nvim)
    app = App(bridge)

    def on_request(name: str, args: list[Any]) -> Any:
        # Lua never sends rpcrequests (questions are notifications answered by host.reply),
        # so nothing here can make Neovim wait on Python.
        return {"error": f"unknown request {name}"}

    def on_notification(name: str, args: list[Any]) -> None:
        if name == "codecompanion" and args:
            app.on_notification(str(args[0]), args[1] if len(args) > 1 else {})

    def on_error(message: str) -> None:
        log.error("rpc error: %s", message)

    log.info("host started (python %s)", sys.version.split()[0])
    # Tell Lua the imports worked: an exit before this is reported as a failed start.
    nvim.exec_lua("require('codecompanion.host').ready()", async_=True)
    try:
        nvim.run_loop(on_request, on_notification, err_cb=on_error)
    finally:
        settle(bridge.loop)
        app.close(lambda: drain(bridge.loop))
        drain(bridge.loop)  # what closing the workspace started
        log.info("host stopped")
    return 0


def _follow_editor(loop: asyncio.AbstractEventLoop, tries: int = 10) -> None:
    """Take the editor's CPU priority (see `priority`); tried again while the kernel is busy."""
    if priority.follow_editor(os.getppid(), priority.host_offset()) == "busy" and tries > 1:
        loop.call_later(0.15, _follow_editor, loop, tries - 1)


def settle(loop: asyncio.AbstractEventLoop) -> None:
    """Spend a stop the RPC layer left pending as Neovim hung up (`loop.stop()` on a stopped
    loop ends the next run after one turn), so the shutdown below runs to its end."""
    if not loop.is_closed() and not loop.is_running():
        with contextlib.suppress(RuntimeError):
            loop.run_until_complete(asyncio.sleep(0))


def drain(loop: asyncio.AbstractEventLoop, timeout: float = 2.0) -> None:
    """Let the stopped chats' tasks end (cancelled) while the interpreter still runs.

    Left to the garbage collector at exit they would be closed mid-await, and their cleanup
    would run with half the interpreter gone: tracebacks in the log after a normal quit.
    """
    if loop.is_closed():
        return
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        try:
            loop.run_until_complete(asyncio.wait(tasks, timeout=timeout))
        except RuntimeError:  # the loop is still running (an embedding host): leave them
            pass


if __name__ == "__main__":
    sys.exit(main())
