"""The one approval gate: every question to the user goes through it.

The policy (approval_policy.POLICY, an ordered list of named rules) decides first; what it
leaves open is asked through the Approver port (a call's approval, a yes/no question) or the
Editor port (a diff review).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from ...ports import (
    ApprovalChoice,
    ApprovalDecision,
    ApprovalRequest,
    HunkDecision,
    UnsavedChoice,
)
from ..model import arguments
from ..model.contract import Invocation, QuestionKind, default_prompt
from .approval_policy import (
    HookWord,
    Question,
    approval_key,
    blanket_allowed,
    command_argument,
    confined,
    decide,
    denied_message,
    doubts,
    leaves_sandbox,
    memory_name,
)
from .approval_policy import rule_verdict as rule_verdict
from .protocol import CallContext

log = logging.getLogger("codecompanion.tools")

Action = Literal["run", "reject", "deny", "cancel", "error"]


@dataclass(frozen=True)
class Verdict:
    """What the gate decided for one call.

    `approved` is True when the user (or YOLO, or a rule) explicitly approved the call.
    `args`/`note` are set after an edit; `error` when the edit was unusable.
    """

    action: Action
    approved: bool = False
    reason: str | None = None
    args: dict[str, Any] | None = None
    note: str | None = None
    approve_all: bool = False


def _unconfined(tool: Invocation, system: CallContext) -> str:
    """The note on a question about a tool whose `cmds` would run without a sandbox (run_command
    and code_runner say where they run in their own questions)."""
    if tool.opts.get("sandboxed") is True or not tool.runs_commands or confined(system):
        return ""
    return " (its commands run unconfined: no sandbox)"


def _why_asked(unsure: tuple[str, ...]) -> str:
    """The note on a question that rules or YOLO could not spare: why the line is uncertain."""
    if not unsure:
        return ""
    return f" (asked because the rules cannot tell what it runs: {'; '.join(unsure)})"


def _hook_note(hook: HookWord | None) -> str:
    """What starts a question a PreToolUse hook asked for: the hooks' reasons (first, so a
    prompt cut to one row still shows them)."""
    if hook is None or not hook.asks:
        return ""
    return f"A hook asks ({'; '.join(hook.reasons) or 'no reason given'}): "


def _sent(tool: Invocation) -> dict[str, Any]:
    """The arguments to show: the call's, without the nulls its binding added for optional
    parameters the model never sent (`unconfined: null`)."""
    given = tool.call.arguments
    return {k: v for k, v in tool.args.items() if v is not None or k in given}


def _always_scope(tool: Invocation, key: str) -> Literal["tool", "command", "arguments"]:
    """What "always" remembers: the whole tool, or only this command line / these arguments."""
    # A line the rules cannot read is never covered tool-wide: only this one line is remembered.
    per_call = not blanket_allowed(tool.opts) or doubts(tool, key) or leaves_sandbox(tool)
    if not per_call:
        return "tool"
    return "command" if command_argument(tool) is not None else "arguments"


async def prompt_text(tool: Invocation) -> str:
    """The question for the user: the tool's own, else the default."""
    return await tool.prompt() or default_prompt(tool.name, tool.args, command_argument(tool))


class ApprovalGate:
    """Decides every question through the policy; asks through the ports when it must."""

    def __init__(self, system: CallContext) -> None:
        self.system = system

    def _log(self, tool: Invocation | None, decision: str, reason: str = "") -> None:
        log.info(
            "chat %s: %s call %s: %s%s",
            self.system.chat_id,
            tool.name if tool is not None else "-",
            tool.call.id if tool is not None else "-",
            decision,
            f" ({reason})" if reason else "",
        )

    async def check(
        self, tool: Invocation, *, queued: int, approve_all: bool, hook: HookWord | None = None
    ) -> Verdict:
        """The verdict for `tool`; `queued` calls wait behind it, `approve_all` is the batch's,
        `hook` the PreToolUse hooks' word on asking."""
        question = Question("call", tool=tool, approve_all=approve_all, hook=hook)
        rule, ruling = await decide(question, self.system)
        key = question.key
        if ruling.action == "deny":
            self._log(tool, f"denied by rule ({rule})", key)
            return Verdict("deny", reason=ruling.reason)
        if ruling.action == "allow":
            self._log(tool, f"runs: {rule}")
            reason = ruling.reason if ruling.approved else None
            return Verdict("run", approved=ruling.approved, reason=reason)
        if ruling.doubts:
            self._log(tool, "asks: the rules cannot tell what it runs", ", ".join(ruling.doubts))
        return await self._ask(tool, key, queued, ruling.doubts, _hook_note(hook))

    async def confirm(self, kind: QuestionKind, text: str, tool: Invocation | None = None) -> bool:
        """A yes/no question (a path outside the project, a redirect, the round cap, ...)."""
        rule, ruling = await decide(Question(kind, text, tool), self.system)
        if ruling.action != "ask":
            log.info("chat %s: %s: %s by %s", self.system.chat_id, text, ruling.action, rule)
            return ruling.action == "allow"
        try:
            return bool(await self.system.approver.confirm(self.system.chat_id, text))
        except Exception:
            log.exception("confirm failed: %s", text)
            return False

    async def review(
        self, tool: Invocation | None, path: str, old: list[str], new: list[str], note: str | None
    ) -> HunkDecision | None:
        """The user's hunk decisions on an edit, or None when the policy spares the review."""
        rule, ruling = await decide(Question("diff_review", path, tool), self.system)
        editor = self.system.editor
        if ruling.action != "ask" or editor is None:
            self._log(tool, f"diff of {path} not reviewed: {rule}")
            return None
        if note is None:
            decision: HunkDecision = await editor.review_diff(self.system.chat_id, path, old, new)
        else:
            decision = await editor.review_diff(self.system.chat_id, path, old, new, note=note)
        counts = f"{len(decision.accepted)} hunk(s) accepted, {len(decision.rejected)} rejected"
        self._log(tool, f"diff of {path} reviewed: {counts}")
        return decision

    async def unsaved(self, tool: Invocation | None, path: str) -> UnsavedChoice:
        """What to do with an edit of a buffer holding the user's unsaved changes: asked when
        the edit's review would be, else edit the buffer and leave it unsaved (nothing lost)."""
        rule, ruling = await decide(Question("diff_review", path, tool), self.system)
        editor = self.system.editor
        if ruling.action != "ask" or editor is None:
            self._log(tool, f"edit of unsaved {path} kept unsaved: {rule}")
            return "buffer"
        choice = await editor.ask_unsaved(self.system.chat_id, path)
        self._log(tool, f"edit of unsaved {path}: user chose {choice}")
        return choice

    async def decided_by(self, tool: Invocation, decides: Callable[[], Awaitable[bool]]) -> Verdict:
        """The verdict when the tool decides its own approval (an older tool's
        `handlers.approved`): deny rules still apply first; True runs, False rejects."""
        key = approval_key(tool)
        if rule_verdict(tool.opts, key, command_argument(tool) is not None) == "deny":
            self._log(tool, "denied by rule", key)
            return Verdict("deny", reason=denied_message(tool, key))
        if await decides():
            self._log(tool, "approved by its handlers.approved")
            return Verdict("run", approved=True, reason="approved by the tool")
        self._log(tool, "rejected by its handlers.approved")
        return Verdict("reject")

    async def _ask(
        self, tool: Invocation, key: str, queued: int, unsure: tuple[str, ...], note: str
    ) -> Verdict:
        argument = command_argument(tool)
        editable = (
            str(tool.args.get(argument, ""))
            if argument is not None
            else json.dumps(tool.args, indent=2, ensure_ascii=False)
        )
        choices: tuple[ApprovalChoice, ...] = ("approve", "always", "reject", "cancel", "edit")
        if queued:
            choices = ("approve", "approve_all", "always", "reject", "cancel", "edit")
        prompt = await prompt_text(tool)
        request = ApprovalRequest(
            chat_id=self.system.chat_id,
            tool_name=tool.name,
            call_id=tool.call.id,
            prompt=note + prompt + _why_asked(unsure) + _unconfined(tool, self.system),
            arguments=_sent(tool),
            choices=choices,
            editable_text=editable,
            always_scope=_always_scope(tool, key),
        )
        # CodeCompanion's data: `name` when asked, `choice` when answered (the view adds bufnr).
        # These are the only places the two events fire: exactly once per question.
        data = {"id": self.system.chat_id, "name": tool.name, "call_id": tool.call.id}
        self.system.reporter.fire("ToolApprovalRequested", data)
        # The tool line shows the arguments that will run (after a repair or a hook's change).
        shown = replace(tool.call, arguments=request.arguments)
        self.system.reporter.status(shown, "awaiting_approval", request.prompt)
        choice = "cancel"
        try:
            decision = await self.system.approver.ask(request)
            choice = decision.choice
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("%s: the approval prompt failed", tool.name)
            choice = "reject"
            return Verdict("reject", reason=f"the approval prompt failed: {exc}")
        finally:
            self.system.reporter.fire("ToolApprovalFinished", {**data, "choice": choice})
        self._log(tool, f"user chose {decision.choice}", decision.reason or "")
        return self._verdict(tool, key, decision, "approve_all" in choices)

    def _verdict(
        self, tool: Invocation, key: str, decision: ApprovalDecision, offered_all: bool
    ) -> Verdict:
        choice = decision.choice
        if choice == "approve":
            return Verdict("run", approved=True, reason="approved")
        if choice == "approve_all":
            return Verdict("run", approved=True, reason="approve_all", approve_all=offered_all)
        if choice == "always":
            per_command = _always_scope(tool, key) != "tool"
            self.system.approvals.remember(memory_name(tool), key, per_command)
            return Verdict("run", approved=True, reason="always")
        if choice == "cancel":
            return Verdict("cancel", reason="cancelled by the user")
        if choice == "edit":
            return self._edited(tool, decision.edited)
        if choice == "reject":
            return Verdict("reject", reason=decision.reason or None)
        log.warning("%s: unknown approval choice %r; rejecting", tool.name, choice)
        return Verdict("reject", reason=f"unknown choice {choice!r}")

    def _edited(self, tool: Invocation, text: str | None) -> Verdict:
        if text is None:
            return Verdict("run", approved=True, reason="edit without changes")
        result = arguments.edited(
            tool.name, text, tool.args, command_argument(tool), tool.spec.parameters
        )
        if result.args is None:
            self._log(tool, "edit rejected", result.error or "")
            return Verdict("error", reason=result.error)
        edited_key = approval_key(tool, result.args)
        if rule_verdict(tool.opts, edited_key, command_argument(tool) is not None) == "deny":
            self._log(tool, "edited call denied by rule", edited_key)
            return Verdict("deny", reason=denied_message(tool, edited_key))
        return Verdict("run", approved=True, reason="edited", args=result.args, note=result.note)


class CallQuestions:
    """The questions one call's code may ask (its ToolContext's `asks`), through the gate; a
    diff review is about `invocation`, once the call has started."""

    def __init__(self, gate: ApprovalGate) -> None:
        self.gate = gate
        self.invocation: Invocation | None = None

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """The user's yes or no (False when nobody can be asked)."""
        return await self.gate.confirm(kind, question, self.invocation)

    async def review(
        self, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision | None:
        """The user's hunk decisions on an edit, or None when the policy spares the review."""
        return await self.gate.review(self.invocation, path, old, new, note)

    async def unsaved(self, path: str) -> UnsavedChoice:
        """What to do with an edit of a buffer holding the user's unsaved changes."""
        return await self.gate.unsaved(self.invocation, path)
