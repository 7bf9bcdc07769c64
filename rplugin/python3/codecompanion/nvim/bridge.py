"""The one crossing between the core's asyncio loop and Neovim.

The core runs on pynvim's own event loop. Calls into Neovim from a task are either
fire-and-forget notifications (`async_=True`) or requests run inside a greenlet, which is
the only place pynvim allows a synchronous call; answers that depend on the user come
back as notifications and resolve a future keyed by a request id.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import greenlet
import pynvim

from ..render_ops import Notice

log = logging.getLogger("codecompanion.nvim")

# Lua source is fixed; module and function names travel as values.
_CALL = "local mod, fn = ...; return require(mod)[fn](select(3, ...))"


class Bridge:
    """Calls into Lua, waits for Lua's answers, and runs the core's tasks."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self.loop: asyncio.AbstractEventLoop = nvim.loop
        self.channel_id: int = nvim.channel_id
        self._session = nvim._session  # see notify_lua
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()

    def notify_lua(self, module: str, function: str, *args: Any) -> None:
        """Call a Lua function without waiting (never blocks either side).

        Sent through pynvim's session itself: `nvim.exec_lua` first walks every value of the
        arguments to swap its Buffer and Window objects for their ids, and the arguments here
        are plain values (a tool round's batch: ~5 µs of walking per op, more than encoding it).
        """
        try:
            self._session.request("nvim_exec_lua", _CALL, [module, function, *args], async_=True)
        except (OSError, EOFError) as exc:  # Neovim went away
            log.warning("notify %s.%s failed: %s", module, function, exc)

    async def request_lua(self, module: str, function: str, *args: Any) -> Any:
        """Call a Lua function and await its return value (a short request, not a prompt)."""
        return await self.call_in_greenlet(
            lambda: self.nvim.exec_lua(_CALL, module, function, *args)
        )

    def call_in_greenlet(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run a synchronous pynvim call from a task, as a future."""
        future: asyncio.Future[Any] = self.loop.create_future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the awaiting task
                if not future.done():
                    future.set_exception(exc)

        greenlet.greenlet(run).switch()
        return future

    async def ask_lua(self, module: str, function: str, *args: Any) -> Any:
        """Call Lua with (channel, request id, *args) and await its `reply(rid, value)`."""
        rid = next(self._ids)
        future: asyncio.Future[Any] = self.loop.create_future()
        self._pending[rid] = future
        try:
            self.notify_lua(module, function, self.channel_id, rid, *args)
            return await future
        finally:
            self._pending.pop(rid, None)

    def reply(self, rid: int, value: Any) -> None:
        """Resolve the future of request `rid` (called for Lua's answer notifications)."""
        future = self._pending.get(int(rid))
        if future is not None and not future.done():
            future.set_result(value)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the loop; a crash is logged and shown as one line."""
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("task failed", exc_info=exc)
            self.echo_error(f"internal error: {exc} (see :CodeCompanionLog)")

    def notice(self, notice: Notice) -> None:
        """One line in the message area outside any chat's batch (render.lua's notice handler)."""
        self.notify_lua("codecompanion.render", "notice", notice.wire())

    def echo_error(self, message: str) -> None:
        """One line in the message area (multi-line messages stall a headless Neovim)."""
        line = " ".join(str(message).split())
        self.notice(Notice(text=line, level="error"))
