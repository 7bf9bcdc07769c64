"""The one command runner of a chat's tools (run_command, code_runner, grep_search and the
commands of CodeCompanion-style cmds): the chat's environment, sandbox and process cap applied
in one place, and one reading of how a command ended (`success`, `error`, or `timeout` when its
time ran out).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import ToolError
from ..model.contract import CommandRun, CommandStatus, QuestionKind, bounded

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox
    from ...sandbox.process_cap import ProcessCap
    from .process import FinishedProcess

# Seconds past its time limit a command's run may take to kill and reap what it started.
_KILL_GRACE = 5.0


class RunnerSettings(Protocol):
    """What the runner reads from its tool system each time (it may change between runs)."""

    cwd: Path
    opts: dict[str, Any]
    sandbox: CommandSandbox | None

    def environment(self) -> dict[str, str]:
        """The environment tool processes get."""
        ...

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """The user's yes or no."""
        ...


def status_of(finished: FinishedProcess) -> CommandStatus:
    """How a process ended, read one way for every tool."""
    if finished.timed_out:
        return "timeout"
    return "success" if finished.exit_code == 0 else "error"


# What a program prints when the system refused it a new process (fork's EAGAIN).
_NO_FORK = ("resource temporarily unavailable", "cannot fork", "can't fork", "fork: retry")


def cap_note(cap: ProcessCap | None, refused: int, result: FinishedProcess | None) -> str:
    """The line a result gets when its command met the chat's process cap (else ""): its
    cgroup refused a fork since it counted `refused`, or (held by RLIMIT_NPROC alone, which
    keeps no count) the command said a fork failed."""
    if cap is None:
        return ""
    if cap.cgroup is not None and cap.cgroup.capped:
        reached = cap.refusals() > refused
    else:
        said = "" if result is None else (result.stdout[-2000:] + result.stderr[-2000:]).lower()
        reached = any(words in said for words in _NO_FORK)
    if not reached:
        return ""
    return (
        f"note: the command reached the chat's process cap (max_processes = {cap.limit}): "
        "starting more processes was refused."
    )


class CommandRunner:
    """Runs one tool command at a time for a chat, confined by its sandbox unless asked not."""

    def __init__(self, settings: RunnerSettings) -> None:
        self.settings = settings

    async def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None,
        cwd: Path | None = None,
        max_output: int | None = None,
        env: Mapping[str, str] | None = None,
        confined: bool = True,
    ) -> CommandRun:
        """Run `argv` in `cwd` (else the project root) for at most `timeout` seconds.

        `confined` runs it in the chat's sandbox when there is an active one (the sandbox's
        boundary is `cwd`); confined or not, it and all it starts share the chat's process cap
        (`max_processes`), and its whole process group is killed when its time runs out or it
        is cancelled; `env` replaces the chat's environment for tool processes; output
        beyond `max_output` bytes per stream (else the chat's `max_process_bytes`) is dropped.
        A git repository a confined command made in the project is held and asked about
        (sandbox/aftermath.py); what was decided, and a command meeting the cap, is in the
        run's `notes`.
        """
        from .process import run_process  # only command tools need the process machinery

        settings = self.settings
        where = cwd if cwd is not None else settings.cwd
        box = settings.sandbox if confined else None
        args = tuple(str(part) for part in argv)
        try:
            launch = None if box is None else box.launch(where)
        except ToolError as exc:
            return CommandRun("error", args, None, "", str(exc), started=False)
        limit = max_output or int(settings.opts.get("max_process_bytes") or 1_000_000)
        environment = settings.environment() if env is None else dict(env)
        cap = self._cap()
        refused = cap.refusals() if cap is not None else 0
        work = run_process(
            args,
            cwd=where,
            timeout=timeout,
            max_output=limit,
            env=environment,
            sandbox=launch,
            cap=cap,
        )
        finished, result = await bounded(work, None if timeout is None else timeout + _KILL_GRACE)
        settled = await self._settle(where) if launch is not None else ""
        notes = "\n".join(
            filter(None, (cap_note(cap, refused, result if finished else None), settled))
        )
        if not finished:  # the run itself did not end: its group is killed by the cancel
            said = f"`{shlex.join(args)}` did not stop after {timeout:g}s."
            return CommandRun("timeout", args, None, "", said, notes=notes)
        return CommandRun(
            status_of(result),
            result.argv,
            result.exit_code,
            result.stdout,
            result.stderr,
            truncated=result.truncated,
            duration=result.duration,
            started=result.started,
            notes=notes,
        )

    def _cap(self) -> ProcessCap | None:
        """The chat's process cap for the next command (None: a chat without a sandbox's
        settings, whose commands keep the host's limits)."""
        box = self.settings.sandbox
        return box.process_cap() if box is not None else None

    async def _settle(self, where: Path) -> str:
        """A repository a confined command made in the project, held and asked about."""
        settings = self.settings
        root = settings.cwd
        if where != root and root not in where.parents:  # a scratch folder (code_runner's)
            return ""
        from ...sandbox.aftermath import settle

        return await settle(settings.sandbox, root, settings.confirm)
