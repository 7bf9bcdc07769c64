"""What the hooks of one event decided, read as Claude Code reads them.

Exit 0 lets it go (its JSON answer may block or add context; for UserPromptSubmit and
SessionStart plain text is context for the model); exit 2 blocks, its stderr the reason; any
other exit, a crash or a timeout is a broken hook: one line, and the event goes on. A block
is always said to the user too: no hook blocks silently.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .run import BLOCK, HookRun

log = logging.getLogger("codecompanion.hooks")

# Events a block stops (or, after a tool, tells the model about); on the others a block is
# only said to the user.
BLOCKING = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
TEXT_IS_CONTEXT = ("UserPromptSubmit", "SessionStart")


Permission = Literal["allow", "ask"]


@dataclass
class Verdict:
    """The hooks' word on one event. For PreToolUse, besides a block (deny): `permission`,
    "ask" (a question whatever the rules say) over "allow" (no question where the rules would
    spare one), with the reasons an "ask" gave; and `updated_input`, the arguments a hook
    gave instead of the model's."""

    blocked: bool = False
    reasons: list[str] = field(default_factory=list)  # why it was blocked (for the model)
    context: list[str] = field(default_factory=list)  # text the model gets besides
    notices: list[str] = field(default_factory=list)  # one line each for the user
    permission: Permission | None = None
    asking: list[str] = field(default_factory=list)  # why a hook asks (shown in the question)
    updated_input: dict[str, Any] | None = None
    changed_by: list[str] = field(default_factory=list)  # the hooks that gave updated_input
    changed_by_project: bool = False  # one of them is a hook of the project's settings

    @property
    def reason(self) -> str:
        """The reasons as one text."""
        return "\n".join(self.reasons)


def verdict(event: str, runs: list[HookRun]) -> Verdict:
    """The combined word of every hook that ran on `event`."""
    result = Verdict()
    updates: list[tuple[str, dict[str, Any]]] = []
    for run in runs:
        if run.failed is not None:
            result.notices.append(run.failed)
        elif run.exit_code == BLOCK:
            _blocked(result, event, run, run.stderr.strip() or f"blocked by hook {run.label}")
        else:
            _answered(result, event, run)
            if event == "PreToolUse":
                _permission(result, run, updates)
    _updated(result, updates)
    return result


def _permission(result: Verdict, run: HookRun, updates: list[tuple[str, dict[str, Any]]]) -> None:
    """PreToolUse's "ask" and "allow" (older hooks: `"decision": "approve"`), and new input."""
    answer = run.answer
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    decision = specific.get("permissionDecision")
    if decision is None and answer.get("decision") == "approve":
        decision = "allow"
    if decision == "ask":
        result.permission = "ask"
        reason = _text(specific.get("permissionDecisionReason")) or f"hook {run.label} asks"
        result.asking.append(reason)
    elif decision == "allow" and run.from_project:
        # The repository's own hook cannot spare a question: only the user's hooks can.
        log.info("hook %s (project settings) allows a call: asked as usual", run.label)
    elif decision == "allow" and result.permission is None:
        result.permission = "allow"
    new = specific.get("updatedInput")
    if isinstance(new, Mapping):
        updates.append((run.label, dict(new)))
        result.changed_by_project = result.changed_by_project or run.from_project


def _updated(result: Verdict, updates: list[tuple[str, dict[str, Any]]]) -> None:
    """One hook's new arguments are taken; hooks that disagree block the call (which to
    run cannot be told)."""
    if not updates or result.blocked:
        return
    if any(update != updates[0][1] for _label, update in updates[1:]):
        reason = "hooks gave different arguments for this call"
        result.blocked = True
        result.reasons.append(reason)
        result.notices.append(f"PreToolUse blocked: {reason}")
        return
    result.updated_input = updates[0][1]
    result.changed_by = [label for label, _update in updates]


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
