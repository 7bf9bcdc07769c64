"""Running a project's checks after a tool round that changed files: the user says yes once for
the list, each matching check runs (in the chat's sandbox, through the `Runner` the tool system
gives), and the failures become one message for the model, as Aider sends its linter's."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import checks as found_checks
from .checks import Check
from .trust import TrustStore

log = logging.getLogger("codecompanion.after_edit")

NOT_FOUND = 127  # the shell's exit code for a program it cannot find
MAX_OUTPUT = 4000  # characters of one check's output the model gets (its end, where summaries are)


@dataclass(frozen=True)
class CheckRun:
    """One check's run: its command line, how it ended and what it printed."""

    command: str
    origin: str
    exit_code: int | None  # None: killed at its time limit, or it could not start
    output: str
    timed_out: bool = False

    @property
    def failed(self) -> bool:
        """A real failure the model should hear of (not a program missing here)."""
        return self.timed_out or self.exit_code not in (0, NOT_FOUND, None)

    @property
    def missing(self) -> bool:
        """The program is not installed (or the command could not start)."""
        return not self.timed_out and self.exit_code in (NOT_FOUND, None)


class Runner(Protocol):
    """Runs one command line in the project, confined as the chat's commands are."""

    async def __call__(self, command: str, timeout: float) -> CheckRun:
        """The finished run (its `origin` left empty)."""
        ...


Ask = Callable[[str], Awaitable[bool]]
Where = Callable[[], str]  # where checks run (the sandbox), said only when asking


@dataclass(frozen=True)
class ChecksOptions:
    """`opts["editor"]`: whether checks are found in the project, and their time limit."""

    find: bool = True
    timeout: float = 120.0

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any]) -> ChecksOptions:
        """Read `opts["editor"]` (checked by config.py)."""
        section = opts.get("editor")
        editor = section if isinstance(section, Mapping) else {}
        timeout = editor.get("checks_timeout", cls.timeout)
        return cls(
            find=editor.get("find_checks", True) is not False,
            timeout=float(timeout) if isinstance(timeout, (int, float)) else cls.timeout,
        )


class ProjectChecks:
    """One project's checks: the config file's `after_edit` and those its files name."""

    def __init__(
        self,
        root: Path,
        configured: Mapping[str, Any] | None,
        trust: TrustStore,
        options: ChecksOptions | None = None,
    ) -> None:
        self.root = root
        self.configured = found_checks.configured(configured)
        self.trust = trust
        self.options = options or ChecksOptions()
        self.last: list[CheckRun] = []  # the runs after the last round that ran checks

    def listed(self) -> list[Check]:
        """Every check, the configured ones first (the project's files are read again each
        time: a script added meanwhile shows, and is asked about)."""
        found = found_checks.found(self.root) if self.options.find else []
        return [*self.configured, *found]

    def question(self, listed: Sequence[Check], where: str) -> str:
        """The one-line question that shows the checks."""
        lines = "; ".join(f"{c.command} for {c.glob} ({c.origin})" for c in listed)
        return f"Run these checks after the model's edits in {self.root} ({where}): {lines}?"

    async def allowed(self, listed: Sequence[Check], ask: Ask, where: Where) -> bool:
        """The user's answer for this list: remembered, else asked now (and remembered)."""
        known = self.trust.answer(self.root, listed)
        if known is not None:
            return known
        allowed = await ask(self.question(listed, where()))
        self.trust.remember(self.root, listed, allowed)
        return allowed

    async def after_round(
        self, changed: Sequence[Path], run: Runner, ask: Ask, where: Where
    ) -> list[CheckRun]:
        """Run the checks covering the `changed` files (once the user allowed them)."""
        listed = self.listed()
        # A deleted file is no file to check (a check without {files} still runs for others).
        paths = [p for p in _relative(self.root, changed) if (self.root / p).exists()]
        due = [(c, line) for c in listed for line in [c.line_for(paths)] if line is not None]
        if not due or not await self.allowed(listed, ask, where):
            return []
        runs = []
        for check, line in due:
            done = await run(line, self.options.timeout)
            runs.append(
                CheckRun(done.command, check.origin, done.exit_code, done.output, done.timed_out)
            )
        return runs


def _relative(root: Path, paths: Sequence[Path]) -> list[str]:
    """The changed files under `root`, relative with `/`, each once, in order."""
    result: dict[str, None] = {}
    for path in paths:
        try:
            result[path.relative_to(root).as_posix()] = None
        except ValueError:
            continue  # outside the project: no project check covers it
    return list(result)


def _tail(text: str) -> str:
    text = text.strip()
    if len(text) <= MAX_OUTPUT:
        return text
    return f"... ({len(text) - MAX_OUTPUT} characters cut)\n" + text[-MAX_OUTPUT:]


def failures(runs: Sequence[CheckRun]) -> str | None:
    """The message for the model about the checks that failed, or None when none did."""
    failed = [r for r in runs if r.failed]
    if not failed:
        return None
    parts = ["The project's checks failed after your edits. Fix these problems:"]
    for r in failed:
        status = "timed out" if r.timed_out else f"exit code {r.exit_code}"
        parts.append(f"$ {r.command}\n({status})\n{_tail(r.output) or '(no output)'}")
    return "\n\n".join(parts)
