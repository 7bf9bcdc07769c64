"""`:CodeCompanionChat Checks`: the project's after-edit checks listed in a scratch buffer (where
each comes from, whether the user allowed them, how they last ran), then the question that
allows them or stops them, remembered for the project."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..after_edit.checks import describe
from ..after_edit.runs import CheckRun, ProjectChecks
from .approver import NvimApprover
from .bridge import Bridge

ANSWERS = {True: "allowed", False: "not allowed", None: "not asked yet"}


def _run_line(run: CheckRun) -> str:
    if run.timed_out:
        status = "timed out"
    elif run.missing:
        status = "could not run here (program missing?)"
    else:
        status = "passed" if run.exit_code == 0 else f"failed (exit code {run.exit_code})"
    return f"  {run.command}: {status}"


def lines_for(checks: ProjectChecks, last: Iterable[CheckRun] = ()) -> list[str]:
    """What the scratch buffer shows for the project's checks."""
    listed = checks.listed()
    if not listed:
        return [
            f"No checks after the model's edits in {checks.root}.",
            "Set `after_edit` in codecompanion.py (:help codecompanion-checks).",
        ]
    answer = ANSWERS[checks.trust.answer(checks.root, listed)]
    result = [
        f"Checks after the model's edits in {checks.root} ({answer}):",
        "",
        *(f"  {line}" for line in describe(listed)),
        "",
        "They run in the chat's sandbox after a tool round whose file tools changed files",
        "their glob matches; {files} stands for those files. Failures go to the model.",
    ]
    runs = list(last)
    if runs:
        result += ["", "Last run:", *(_run_line(run) for run in runs)]
    return result


async def show_checks(
    bridge: Bridge, approver: NvimApprover, checks: ProjectChecks, last: Iterable[CheckRun]
) -> None:
    """List the checks, then ask whether they may run (the answer is remembered)."""
    bridge.notify_lua("codecompanion.editor", "scratch", "checks", lines_for(checks, last))
    listed = checks.listed()
    if not listed:
        return
    allowed = await approver.confirm(
        "", f"Run these {len(listed)} check(s) after the model's edits in {Path(checks.root).name}?"
    )
    checks.trust.remember(checks.root, listed, allowed)
