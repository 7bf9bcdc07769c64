"""`terminal/*` (protocol v1; the v2 draft drops it): an agent's commands run in the chat's
command sandbox, their output streamed to the chat, readable while they run and after.

A command is one process group (run_process: killed whole on kill, release or timeout); its
stdout and stderr go to one capped buffer, cut from the front as ACP says. Deny rules for
`run_command` refuse a command; one the user has not let the agent run (an `execute` call the
user allowed, or a mode that lets sandboxed commands run) is asked about first.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from acp import RequestError

from ..chat.driver import Session
from ..errors import ToolError
from ..tools.builtin._support.paths import is_inside, project_root, real_path
from ..tools.builtin._support.plain_command import plain_argv
from ..tools.runtime.approval_policy import rule_verdict
from ..tools.runtime.child import Sink
from ..tools.runtime.process import FinishedProcess, run_process
from .refusals import refuse

if TYPE_CHECKING:
    from ..sandbox.launcher import Launch

# Bytes of output kept per command when the agent names no limit.
DEFAULT_LIMIT = 1_000_000
# Seconds a command may run at most.
TIMEOUT = 600.0


class StreamSink(Sink):
    """A command's output: kept under its cap (the front cut away), each piece told on."""

    def __init__(self, limit: int, told: Callable[[bytes], None]) -> None:
        super().__init__(limit, bytearray())
        self._told = told
        self.cut = False

    def feed(self, chunk: bytes) -> None:
        """Keep the last `limit` bytes; tell the chat."""
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]
            self.cut = True
        self._told(chunk)


@dataclass
class _Command:
    line: str
    sink: StreamSink
    task: asyncio.Task[FinishedProcess]
    killed: bool = False
    result: FinishedProcess | None = field(default=None)


class AgentTerminals:
    """One chat's commands started by its agent."""

    def __init__(self, chat: Session, agent: str, told: Callable[[str, str], None]) -> None:
        self.chat = chat
        self.agent = agent
        self._told = told  # (command line, latest output) for the chat's progress line
        self._commands: dict[str, _Command] = {}
        self._ids = itertools.count(1)
        self.allowed = 0  # commands the user let the agent run (through its permission asks)

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> CreateTerminalResponse:
        """Start the command (after the rules, and the user when due)."""
        argv, line = command_line(command, args)
        root = project_root(self.chat.tools)
        where = real_path(root, cwd) if cwd else root
        if not is_inside(root, where):
            self._refuse(f"{self.agent} wanted to run `{line}` in {where}, outside the project")
        await self._permitted(line)
        environment = self.chat.tools.environment()
        environment.update({item.name: item.value for item in env or []})
        launch = self._launch(root)
        limit = output_byte_limit if output_byte_limit and output_byte_limit > 0 else DEFAULT_LIMIT
        sink = StreamSink(limit, lambda chunk: self._told(line, chunk.decode("utf-8", "replace")))
        box = self.chat.tools.sandbox
        work = run_process(
            argv,
            cwd=where,
            timeout=TIMEOUT,
            env=environment,
            sandbox=launch,
            sinks=(sink, sink),
            cap=box.process_cap() if box is not None else None,  # the chat's, as its tools'
        )
        terminal_id = f"term-{next(self._ids)}"
        await self._captured_from(terminal_id)
        task = asyncio.get_running_loop().create_task(work)
        task.add_done_callback(lambda _task: self._captured_to(terminal_id))
        self._commands[terminal_id] = _Command(line, sink, task)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _captured_from(self, terminal_id: str) -> None:
        """The project captured before the command runs, and the command's time told to the
        checkpoints (what changes meanwhile is the chat's), as for a tool round's command."""
        checkpoints = self.chat.checkpoints
        if checkpoints is not None:
            await checkpoints.before_tools()
        watch = self.chat.tools.reporter.watch
        if watch is not None:
            watch.call_started(terminal_id)

    def _captured_to(self, terminal_id: str) -> None:
        watch = self.chat.tools.reporter.watch
        if watch is not None:
            watch.call_ended(terminal_id)
        if self.chat.checkpoints is not None:
            self.chat.checkpoints.after_tools()

    def _launch(self, root: Path) -> Launch | None:
        box = self.chat.tools.sandbox
        if box is None or not box.active:
            return None
        try:
            return box.launch(root)
        except ToolError as exc:
            self._refuse(f"the sandbox cannot run {self.agent}'s command: {exc}")

    async def _permitted(self, line: str) -> None:
        """Deny rules refuse; an allowed `execute` call or the chat's mode lets it run; else
        the user is asked."""
        entry = self.chat.tools.registry.get("run_command")
        opts = dict(entry.tool.opts) if entry is not None else {}
        if rule_verdict({"deny": opts.get("deny")}, line, True) == "deny":
            self._refuse(f"`{line}` is refused by a deny rule")
        if self.allowed > 0:
            self.allowed -= 1
            return
        tools = self.chat.tools
        box = tools.sandbox
        sandboxed = box is not None and box.active
        if tools.yolo or (sandboxed and tools.mode in ("sandboxed", "yolo")):
            return
        where = "in the sandbox" if sandboxed else "unconfined (no sandbox)"
        if not await tools.confirm(f"Let {self.agent} run `{line}` {where}?", "tool"):
            self._refuse(f"the user did not let {self.agent} run `{line}`")

    def text(self, terminal_id: str) -> str:
        """A command's output so far ('' for an unknown id)."""
        command = self._commands.get(terminal_id)
        return command.sink.text() if command is not None else ""

    def _command(self, terminal_id: str) -> _Command:
        command = self._commands.get(terminal_id)
        if command is None:
            raise RequestError.invalid_params({"terminalId": f"no terminal {terminal_id}"})
        return command

    async def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """The output so far, and the exit status once it ended."""
        command = self._command(terminal_id)
        status = _status(command) if command.task.done() else None
        return TerminalOutputResponse(
            output=command.sink.text(), truncated=command.sink.cut, exit_status=status
        )

    async def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """Wait for the command to end."""
        command = self._command(terminal_id)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({command.task})
        status = _status(command)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, terminal_id: str) -> KillTerminalResponse:
        """Kill the command's whole group; its output stays readable."""
        command = self._command(terminal_id)
        if not command.task.done():
            command.killed = True
            command.task.cancel()
            await asyncio.wait({command.task})
        return KillTerminalResponse()

    async def release_terminal(self, terminal_id: str) -> ReleaseTerminalResponse:
        """Kill the command if it runs, and forget it."""
        await self.kill_terminal(terminal_id)
        self._commands.pop(terminal_id, None)
        return ReleaseTerminalResponse()

    def close(self) -> None:
        """Kill every command still running (the chat closes or its agent went away)."""
        for command in self._commands.values():
            if not command.task.done():
                command.killed = True
                command.task.cancel()
        self._commands.clear()

    def _refuse(self, line: str) -> NoReturn:
        refuse(self.chat.view, line)


def command_line(command: str, args: list[str] | None) -> tuple[list[str], str]:
    """What runs, and the line rules and questions see. A command without arguments is a shell
    line (agents send `npm test && npm run lint` so): run as the shell would, through `sh -c`
    when it needs the shell."""
    if args:
        argv = [command, *args]
        return argv, " ".join(shlex.quote(part) for part in argv)
    return plain_argv(command) or ["sh", "-c", command], command


def _status(command: _Command) -> TerminalExitStatus:
    task = command.task
    if task.cancelled() or command.killed:
        return TerminalExitStatus(exit_code=None, signal="SIGKILL")
    result = task.result() if task.exception() is None else None
    if result is None or result.exit_code is None:
        return TerminalExitStatus(
            exit_code=None, signal="SIGKILL" if result and result.timed_out else None
        )
    if result.exit_code < 0:
        return TerminalExitStatus(exit_code=None, signal=f"signal {-result.exit_code}")
    return TerminalExitStatus(exit_code=result.exit_code, signal=None)
