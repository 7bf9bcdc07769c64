"""After a tool round whose file tools changed files: the project's checks (after_edit/) run in
the chat's sandbox, and their failures join the history right after the round's results, so
the next request carries them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...after_edit.runs import CheckRun, ProjectChecks, failures
from ...errors import ToolError
from ...sandbox.commands import sandbox_of
from .child_env import tool_environment
from .process import run_process

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox
    from .approval_policy import QuestionKind

log = logging.getLogger("codecompanion.tools")

MAX_BYTES = 200_000  # bytes kept per output stream of a check


class RoundSystem(Protocol):
    """What the checks need of the chat's tool system."""

    pending_messages: list[tuple[str, str, bool]]  # (role, text, shown) after the results

    @property
    def cwd(self) -> Path:
        """The project root."""
        ...

    @property
    def opts(self) -> Mapping[str, Any]:
        """The tool system's options (`env` for the checks' environment)."""
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
        box = sandbox_of(self.system)
        return box.describe() if box is not None else "unconfined"

    async def __call__(self, command: str, timeout: float) -> CheckRun:
        """Run `command`; a sandbox that cannot be prepared is a run that did not start."""
        root = self.system.cwd
        box = sandbox_of(self.system)
        try:
            launch = box.launch(root) if box is not None else None
        except ToolError as exc:
            return CheckRun(command, "", None, str(exc))
        done = await run_process(
            ["sh", "-c", command],
            cwd=root,
            timeout=timeout,
            env=tool_environment(self.system),
            max_output=MAX_BYTES,
            sandbox=launch,
        )
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
        system.pending_messages.append(("user", text, True))
