"""The stdio transport for the SDK's `Client`: a server's stdout read in linear time, big
messages parsed off the host's event loop, and a cap on a message's size.

The SDK's own reader joins its buffer with every 64 KB chunk and splits the whole again
(quadratic in a line's length) and parses every message on the event loop: a 40 MB answer froze
the chat for seconds. Here a line's chunks are kept in a list and joined once; a line past
`inline_limit` bytes is streamed to a short-lived process (`bigline.py`) that checks it with the
SDK's message types and cuts a tool answer's text, so the host parses a bounded message; a line
past `max_line` bytes is dropped and reported as one error (the session goes on). Messages are
still the SDK's `JSONRPCMessage`, checked by its `jsonrpc_message_adapter`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import anyio
import mcp_types
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

_WORKER = Path(__file__).with_name("bigline.py")
_CHUNK = 256 * 1024
# Seconds a server has to exit after its stdin closes, then after SIGTERM.
_EXIT_GRACE = 2.0
_FLUSH = 0.5

Incoming = SessionMessage | Exception


class MessageTooBig(ValueError):
    """A server's message longer than the transport's cap (it was dropped unread)."""


@dataclass(frozen=True)
class Limits:
    """Bytes of one message parsed in the host, bytes of one message at most, characters of
    a tool answer's text kept when a big message is cut."""

    inline_limit: int
    max_line: int
    max_chars: int


def parse(data: bytes) -> Incoming:
    """One message checked by the SDK's types, or the error saying why it cannot be read."""
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(data, by_name=False))
    except ValueError as exc:
        return exc


class _Cutter:
    """A `bigline.py` process a big line is streamed to; it answers the line checked and cut."""

    def __init__(self, process: Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, max_chars: int) -> _Cutter:
        argv = [sys.executable, "-I", str(_WORKER), str(max_chars)]
        return cls(await anyio.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE))  # fmt: skip

    async def feed(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def result(self) -> Incoming:
        """The message the process wrote back (parsed here: it is bounded now), or its error."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None and self.process.stderr is not None
        await self.process.stdin.aclose()
        out = await _read_all(self.process.stdout)
        err = await _read_all(self.process.stderr)
        if await self.process.wait() != 0:
            reason = " ".join(err.decode(errors="replace").split())
            return ValueError(reason or f"the message checker exited {self.process.returncode}")
        return parse(out)

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with anyio.CancelScope(shield=True):
            await self.process.aclose()


async def _read_all(stream: ByteReceiveStream) -> bytes:
    pieces = [chunk async for chunk in _chunks(stream)]
    return b"".join(pieces)


async def _chunks(stream: ByteReceiveStream) -> AsyncIterator[bytes]:
    while True:
        try:
            yield await stream.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return


@dataclass
class _Line:
    """The line being read: its pieces (joined once, at its end), or the process they go to."""

    limits: Limits
    pieces: list[bytes] = field(default_factory=list)
    size: int = 0
    cutter: _Cutter | None = None
    over: bool = False

    async def add(self, data: bytes) -> None:
        """Take the next piece of the line."""
        self.size += len(data)
        if self.over or not data:
            return
        if self.size > self.limits.max_line:
            self.over = True
            self.pieces.clear()
            await self.drop_cutter()
        elif self.cutter is not None:
            await self.cutter.feed(data)
        elif self.size > self.limits.inline_limit:
            self.cutter = await _Cutter.start(self.limits.max_chars)
            for piece in (*self.pieces, data):
                await self.cutter.feed(piece)
            self.pieces.clear()
        else:
            self.pieces.append(data)

    async def finish(self) -> Incoming | None:
        """The line's message (None for a blank line); ready for the next line."""
        size, cutter, over = self.size, self.cutter, self.over
        data = b"".join(self.pieces)
        self.pieces, self.size, self.cutter, self.over = [], 0, None, False
        if over:
            cap = self.limits.max_line / 1_000_000
            return MessageTooBig(f"a message of {size / 1_000_000:.1f} MB is over the "
                                 f"{cap:g} MB limit; it was dropped")  # fmt: skip
        if cutter is not None:
            return await cutter.result()
        return parse(data) if data.strip() else None

    async def drop_cutter(self) -> None:
        cutter, self.cutter = self.cutter, None
        if cutter is not None:
            await cutter.kill()


async def read_messages(
    stdout: ByteReceiveStream, send: MemoryObjectSendStream[Incoming], limits: Limits
) -> None:
    """Frame `stdout` into messages for `send`; once the session is gone, read and drop the
    rest (a server blocked on a full pipe could not see its stdin close)."""
    line = _Line(limits)
    chunks = _chunks(stdout)
    try:
        async for chunk in chunks:
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                await line.add(chunk[start:end])
                start = end + 1
                message = await line.finish()
                if message is not None and not await _deliver(send, message):
                    async for _ in chunks:
                        pass
                    return
            await line.add(chunk[start:])
    finally:
        await line.drop_cutter()
        send.close()


async def _deliver(send: MemoryObjectSendStream[Incoming], message: Incoming) -> bool:
    try:
        await send.send(message)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    return True


async def _write_messages(
    process: Process, receive: MemoryObjectReceiveStream[SessionMessage], done: anyio.Event
) -> None:
    assert process.stdin is not None
    try:
        async with receive:
            async for message in receive:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send((text + "\n").encode())
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass
    finally:
        done.set()


async def _stop(process: Process) -> None:
    """Close the server's stdin, give it time to exit, then end its process group."""
    assert process.stdin is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with anyio.move_on_after(_EXIT_GRACE):
            while process.returncode is None:
                await anyio.sleep(0.01)
        if process.returncode is not None:
            return


@contextlib.asynccontextmanager
async def stdio_transport(
    params: StdioServerParameters, errlog: TextIO | None, limits: Limits
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Incoming], MemoryObjectSendStream[SessionMessage]]
]:
    """Start the server (in a session of its own) and hold its streams open for the Client."""
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog if errlog is not None else sys.stderr,
        cwd=params.cwd,
        start_new_session=True,
    )
    to_client, from_server = anyio.create_memory_object_stream[Incoming](0)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()
    assert process.stdout is not None
    async with anyio.create_task_group() as group:
        group.start_soon(read_messages, process.stdout, to_client, limits)
        group.start_soon(_write_messages, process, from_client, written)
        try:
            yield from_server, to_server
        finally:
            with anyio.CancelScope(shield=True):
                await _shut(process, from_server, to_server, written)
            group.cancel_scope.cancel()


async def _shut(
    process: Process,
    from_server: MemoryObjectReceiveStream[Incoming],
    to_server: MemoryObjectSendStream[SessionMessage],
    written: anyio.Event,
) -> None:
    from_server.close()
    to_server.close()
    with anyio.move_on_after(_FLUSH):
        await written.wait()
    await _stop(process)
    with contextlib.suppress(Exception):
        await process.aclose()
