"""What the hooks of one event decided, read as Claude Code reads them.

Exit 0 lets it go (its JSON answer may block or add context; for UserPromptSubmit and
SessionStart plain text is context for the model); exit 2 blocks, its stderr the reason; any
other exit, a crash or a timeout is a broken hook: one line, and the event goes on. A block
is always said to the user too: no hook blocks silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .run import BLOCK, HookRun

# Events a block stops (or, after a tool, tells the model about); on the others a block is
# only said to the user.
BLOCKING = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TEXT_IS_CONTEXT = ("UserPromptSubmit", "SessionStart")


@dataclass
class Verdict:
    """The hooks' word on one event."""

    blocked: bool = False
    reasons: list[str] = field(default_factory=list)  # why it was blocked (for the model)
    context: list[str] = field(default_factory=list)  # text the model gets besides
    notices: list[str] = field(default_factory=list)  # one line each for the user

    @property
    def reason(self) -> str:
        """The reasons as one text."""
        return "\n".join(self.reasons)


def verdict(event: str, runs: list[HookRun]) -> Verdict:
    """The combined word of every hook that ran on `event`."""
    result = Verdict()
    for run in runs:
        if run.failed is not None:
            result.notices.append(run.failed)
        elif run.exit_code == BLOCK:
            _blocked(result, event, run, run.stderr.strip() or f"blocked by hook {run.label}")
        else:
            _answered(result, event, run)
    return result


def _blocked(result: Verdict, event: str, run: HookRun, reason: str) -> None:
    if event not in BLOCKING:
        result.notices.append(f"hook {run.label} ({event}): {_line(reason)}")
        return
    result.blocked = True
    result.reasons.append(reason)
    result.notices.append(f"hook {run.label} blocked {event}: {_line(reason)}")


def _answered(result: Verdict, event: str, run: HookRun) -> None:
    """Exit 0: the JSON answer's decision, context and message; else plain text."""
    answer = run.answer
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    if answer.get("decision") == "block" or specific.get("permissionDecision") == "deny":
        reason = _text(answer.get("reason")) or _text(specific.get("permissionDecisionReason"))
        _blocked(result, event, run, reason or f"blocked by hook {run.label}")
    elif answer.get("continue") is False and event in ("PreToolUse", "UserPromptSubmit"):
        _blocked(result, event, run, _text(answer.get("stopReason")) or "stopped by a hook")
    context = _text(specific.get("additionalContext"))
    if context:
        result.context.append(context)
    message = _text(answer.get("systemMessage"))
    if message:
        result.notices.append(f"hook {run.label}: {_line(message)}")
    if not answer and run.stdout.strip() and event in TEXT_IS_CONTEXT:
        result.context.append(run.stdout.strip())


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _line(text: str) -> str:
    first = " ".join(text.split())
    return first if len(first) <= 200 else first[:199] + "…"
