"""After a tool round whose file tools changed files: the project's checks (after_edit/) run in
the chat's sandbox through its command runner, and their failures join the history right after
the round's results, so the next request carries them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from ...after_edit.runs import CheckRun, ProjectChecks, failures

if TYPE_CHECKING:
    from pathlib import Path

    from ...sandbox.commands import CommandSandbox
    from ..model.contract import ChatHandle, Commands, QuestionKind

log = logging.getLogger("codecompanion.tools")

MAX_BYTES = 200_000  # bytes kept per output stream of a check


class RoundSystem(Protocol):
    """What the checks need of the chat's tool system."""

    @property
    def commands(self) -> Commands:
        """The chat's one command runner."""
        ...

    @property
    def notes(self) -> ChatHandle:
        """The chat as tools reach it: its messages join the history after the results."""
        ...

    @property
    def sandbox(self) -> CommandSandbox | None:
        """The chat's command sandbox."""
        ...

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """A yes/no question through the approval gate."""
        ...


class SandboxRunner:
    """Runs a check's command line with `sh -c` in the project, confined like `run_command`."""

    def __init__(self, system: RoundSystem) -> None:
        self.system = system

    def where(self) -> str:
        """Where checks run, for the question that shows them."""
        box = self.system.sandbox
        return box.describe() if box is not None else "unconfined"

    async def __call__(self, command: str, timeout: float) -> CheckRun:
        """Run `command`; a sandbox that cannot be prepared is a run that did not start."""
        done = await self.system.commands.run(
            ["sh", "-c", command], timeout=timeout, max_output=MAX_BYTES
        )
        if not done.started:
            return CheckRun(command, "", None, done.stderr)
        output = "\n".join(part for part in (done.stdout, done.stderr) if part.strip())
        return CheckRun(command, "", done.exit_code, output, done.timed_out)


async def check_round(system: RoundSystem, checks: ProjectChecks, changed: list[Path]) -> None:
    """Run the checks covering `changed`; a failure becomes a message after the results."""
    runner = SandboxRunner(system)

    async def ask(question: str) -> bool:
        return await system.confirm(question, "tool")

    runs = await checks.after_round(changed, runner, ask, runner.where)
    for run in runs:
        if run.missing:
            log.info("check %r could not run here: %s", run.command, run.output[-300:])
    text = failures(runs)
    if text is not None:
        system.notes.add_message("user", text, True)
