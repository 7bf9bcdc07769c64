"""An agent's process: started in its own process group with the environment it is given,
its stdout and stdin as the SDK's message transport, its stderr drained into a log file.

The SDK's own spawner gives the agent a trimmed environment and leaves its stderr a pipe
nobody reads (a chatty agent then blocks on a full pipe); and its line reader hands any JSON
value on, so a line holding `5` or `[]` breaks its receive loop and drops the connection.
Here the line framing is ours and small: a line that is not a JSON object, or is longer than
`MAX_LINE`, is dropped and said in one line; JSON-RPC itself stays the SDK's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..tools.runtime.groupwatch import group_watch

log = logging.getLogger("codecompanion.acp")

# The editor's variables every agent gets (when set): where home, config and caches are, the
# locale, the terminal, proxies and CAs. Credentials are passed by name (`pass_env`) or set.
BASE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
# Bytes of one message from the agent at most (a whole file's text fits); past it the line
# is dropped unparsed.
MAX_LINE = 32 * 1024 * 1024
# Lines longer than this are parsed off the event loop.
BIG_LINE = 512 * 1024
_READ_LIMIT = 1024 * 1024
# Seconds the agent has to exit after its stdin closes, then after SIGTERM.
EXIT_GRACE = 2.0


def agent_env(
    inherited: Mapping[str, str], pass_env: tuple[str, ...], settings: Mapping[str, str]
) -> dict[str, str]:
    """The agent's environment: the base variables and `pass_env` from `inherited` (when set),
    then the agent's own settings over them."""
    env = {name: inherited[name] for name in (*BASE_ENV, *pass_env) if name in inherited}
    env.update(settings)
    return env


class LineTransport:
    """The SDK's `Transport` over an agent's stdio: one JSON object per line each way."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        bad_line: Callable[[str], None],
        max_line: int = MAX_LINE,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._bad_line = bad_line
        self._max_line = max_line

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self._writer.write(data.encode("utf-8"))
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            raise ConnectionError(f"the agent's stdin is closed ({exc})") from None

    async def receive(self) -> dict[str, Any] | None:
        """The next message; None at the end of the agent's output."""
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            message = await self._parse(line)
            if message is not None:
                return message

    async def close(self) -> None:
        """Close the agent's stdin (it should then exit)."""
        with contextlib.suppress(OSError, RuntimeError):
            if self._writer.can_write_eof():
                self._writer.write_eof()
        self._writer.close()

    async def _parse(self, line: bytes) -> dict[str, Any] | None:
        try:
            if len(line) > BIG_LINE:
                value = await asyncio.to_thread(json.loads, line)
            else:
                value = json.loads(line)
        except ValueError:
            self._bad_line(f"the agent wrote a line that is not JSON: {_shown(line)}")
            return None
        if not isinstance(value, dict):
            kind = type(value).__name__
            self._bad_line(f"the agent wrote a JSON {kind}, not a message: {_shown(line)}")
            return None
        return value

    async def _line(self) -> bytes | None:
        """One line, joined once from its pieces; a line over the cap is skipped whole."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                piece = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as exc:
                piece = await self._reader.readexactly(exc.consumed)
                ended = False
            except asyncio.IncompleteReadError as exc:
                piece, ended = exc.partial, True
                if not piece and not parts:
                    return None
            size += len(piece)
            if size <= self._max_line:
                parts.append(piece)
            elif parts:
                parts.clear()  # the line is over the cap: read to its end, keep nothing
            if ended:
                if size > self._max_line:
                    mb = size / (1024 * 1024)
                    limit = self._max_line // (1024 * 1024)
                    self._bad_line(
                        f"the agent wrote a {mb:.0f} MB message, over {limit} MB: dropped"
                    )
                    return b""
                return b"".join(parts)


def _shown(line: bytes) -> str:
    text = line.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


class AgentProcess:
    """One running agent process; `transport` carries its messages."""

    def __init__(self, process: asyncio.subprocess.Process, errlog: TextIO | None) -> None:
        self.process = process
        self._errlog = errlog
        self.last_error = ""  # the agent's last line on stderr (says why it died)
        self._drain = asyncio.get_running_loop().create_task(self._drain_stderr())

    @classmethod
    async def start(
        cls, cmd: tuple[str, ...], env: Mapping[str, str], cwd: Path, errlog: TextIO | None
    ) -> AgentProcess:
        """Start `cmd` in a process group of its own; OSError when it cannot be run."""
        process = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=str(cwd),
            start_new_session=True,  # the whole group is ended with it
            limit=_READ_LIMIT,
        )
        group_watch().add(process.pid)  # and dies with the host, however the host ends
        return cls(process, errlog)

    def transport(self, bad_line: Callable[[str], None]) -> LineTransport:
        """The process's stdio as the SDK's message transport."""
        stdout, stdin = self.process.stdout, self.process.stdin
        assert stdout is not None and stdin is not None
        return LineTransport(stdout, stdin, bad_line)

    @property
    def alive(self) -> bool:
        """True until the process has exited."""
        return self.process.returncode is None

    async def settled(self, timeout: float = 1.0) -> None:
        """Wait (a little) for a dying agent to exit and its last stderr to be read, so the
        line that says why it went away has its exit status and its last words."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), timeout)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), timeout)

    async def _drain_stderr(self) -> None:
        """Read stderr to its end, into the log file: a full pipe would stop the agent."""
        stream = self.process.stderr
        if stream is None:
            return
        while chunk := await stream.read(65536):
            text = chunk.decode("utf-8", "replace")
            lines = [line for line in text.splitlines() if line.strip()]
            if lines:
                self.last_error = lines[-1].strip()[:200]
            if self._errlog is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._errlog.write(text)
                    self._errlog.flush()

    async def stop(self) -> None:
        """End the agent: stdin closed, then SIGTERM, then SIGKILL, to its whole group; what
        the group left running is killed too."""
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                process.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                _signal_group(process.pid, sig)
            try:
                await asyncio.wait_for(process.wait(), EXIT_GRACE)
                break
            except asyncio.TimeoutError:
                continue
        _signal_group(process.pid, signal.SIGKILL)  # children the agent left behind
        group_watch().remove(process.pid)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._drain, EXIT_GRACE)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
