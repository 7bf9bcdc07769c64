"""Whether a call may run: allow/deny rules, remembered approvals, YOLO, and asking the user."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any, Literal

from ...ports import ApprovalChoice, ApprovalDecision, ApprovalRequest
from ..model import arguments
from ..model.forms import takes_config
from ..model.tool import Tool
from . import shell_rules
from .context import CallContext
from .results import as_text
from .runner import invoke

log = logging.getLogger("codecompanion.tools")

# Tools whose approval key and edit text is a shell command line held in this argument.
_COMMAND_ARGUMENT = (("run_command", "cmd"),)

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


def command_argument(tool: Tool) -> str | None:
    """The argument holding a shell command line (run_command: `cmd`), if the tool has one."""
    configured = tool.opts.get("command_arg")
    if isinstance(configured, str):
        return configured
    return dict(_COMMAND_ARGUMENT).get(tool.name)


def approval_key(tool: Tool) -> str:
    """The text rules match and "always" remembers: the command line, or the arguments as JSON."""
    custom = tool.opts.get("approval_key")
    if callable(custom):
        return as_text(custom(tool.args))
    argument = command_argument(tool)
    if argument is not None and isinstance(tool.args.get(argument), str):
        return str(tool.args[argument])
    return json.dumps(tool.args, sort_keys=True, ensure_ascii=False)


def _patterns(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return [str(item) for item in value]
    return []


def rule_verdict(opts: dict[str, Any], key: str, shell: bool) -> Literal["allow", "deny"] | None:
    """Match the `deny` then `allow` fnmatch patterns of `opts` against `key`.

    A shell line is read into the commands it runs (see shell_rules): deny denies if it matches
    the line or any command, or could match a command whose program or arguments the shell
    computes. Allow needs a line the reader is sure about, without redirections, whose every
    command matches.
    """
    deny, allow = _patterns(opts.get("deny")), _patterns(opts.get("allow"))
    if not shell:
        if any(fnmatchcase(key, p) for p in deny):
            return "deny"
        return "allow" if any(fnmatchcase(key, p) for p in allow) else None
    reading = shell_rules.read(key)
    if deny and shell_rules.deny_matches(reading, key, deny):
        return "deny"
    return "allow" if shell_rules.allow_matches(reading, allow) else None


def doubts(tool: Tool, key: str) -> tuple[str, ...]:
    """Why the rules cannot tell what a shell line runs (empty: they can, or it is no shell)."""
    if command_argument(tool) is None:
        return ()
    reading = shell_rules.read(key)
    if reading.certain:
        return ()
    return reading.doubts or ("a command name the shell computes",)


def _why_asked(unsure: tuple[str, ...]) -> str:
    """The note on a question that rules or YOLO could not spare: why the line is uncertain."""
    if not unsure:
        return ""
    return f" (asked because the rules cannot tell what it runs: {'; '.join(unsure)})"


def _denied(tool: Tool, key: str) -> str:
    return (
        f"The {tool.name} call was denied by rule: `{key}` matches a deny pattern in the "
        "user's configuration, so it did not run."
    )


def allowed_in_yolo(tool: Tool) -> bool:
    """False for tools too dangerous for blanket approvals (YOLO, approve_all, tool-wide always)."""
    return tool.opts.get("allowed_in_yolo_mode", True) is not False


def default_prompt(tool: Tool) -> str:
    """`Run the <name> tool?` with a short summary of the arguments."""
    argument = command_argument(tool)
    if argument is not None and isinstance(tool.args.get(argument), str):
        return f"Run the command `{tool.args[argument]}`?"
    summary = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in tool.args.items()
    )
    # Never cut: a field past any cut is exactly where a hostile call would hide.
    return f"Run the {tool.name} tool?" + (f" ({summary})" if summary else "")


def _always_scope(tool: Tool, key: str) -> Literal["tool", "command", "arguments"]:
    """What "always" remembers: the whole tool, or only this command line / these arguments."""
    # A line the rules cannot read is never covered tool-wide: only this one line is remembered.
    per_call = (
        tool.opts.get("require_cmd_approval") or not allowed_in_yolo(tool) or doubts(tool, key)
    )
    if not per_call:
        return "tool"
    return "command" if command_argument(tool) is not None else "arguments"


async def needs_asking(tool: Tool, system: CallContext) -> bool:
    """Whether to ask: `requires_approval` (or `require_approval_before`), then prompt_condition."""
    opts = tool.opts
    value = opts.get("requires_approval", opts.get("require_approval_before", False))
    tools = tool.tools if tool.tools is not None else system
    try:
        if callable(value):
            value = await invoke(value, tool, tools)
        if not value:
            return False
        condition = tool.handlers.get("prompt_condition")
        if condition is None:
            return True
        # (self, tools, config): config is the tool's config entry; (self, meta) reads either way.
        extra = (tool.entry,) if takes_config(condition) else ()
        return bool(await invoke(condition, tool, tools, *extra))
    except Exception:
        log.exception("%s: approval condition failed; asking the user", tool.name)
        return True


async def prompt_text(tool: Tool, system: CallContext) -> str:
    """The question for the user: the tool's `output.prompt`, else the default."""
    build = tool.output.get("prompt")
    if build is not None:
        try:
            tools = tool.tools if tool.tools is not None else system
            text = as_text(await invoke(build, tool, tools))
            if text.strip():
                return text
        except Exception:
            log.exception("%s: output.prompt failed; using the default question", tool.name)
    return default_prompt(tool)


class ApprovalGate:
    """Decides, per call, whether it runs; asks through the Approver port when it must."""

    def __init__(self, system: CallContext) -> None:
        self.system = system

    def _log(self, tool: Tool, decision: str, reason: str = "") -> None:
        call_id = tool.call.id if tool.call else "?"
        log.info(
            "chat %s: %s call %s: %s%s",
            self.system.chat_id,
            tool.name,
            call_id,
            decision,
            f" ({reason})" if reason else "",
        )

    async def check(self, tool: Tool, *, queued: int, approve_all: bool) -> Verdict:
        """The verdict for `tool`; `queued` calls wait behind it, `approve_all` is the batch's."""
        key = approval_key(tool)
        rule = rule_verdict(tool.opts, key, command_argument(tool) is not None)
        if rule == "deny":
            self._log(tool, "denied by rule", key)
            return Verdict("deny", reason=_denied(tool, key))
        if rule == "allow":
            self._log(tool, "allowed by rule", key)
            return Verdict("run", approved=True, reason="allowed by rule")
        if (tool.name, key) in self.system.approvals.commands:
            self._log(tool, "approved (always, this command)")
            return Verdict("run", approved=True, reason="always")
        unsure = doubts(tool, key)
        if unsure:  # nothing but the user approves a line whose commands cannot be known
            self._log(tool, "asks: the rules cannot tell what it runs", ", ".join(unsure))
            return await self._ask(tool, key, queued, unsure)
        blanket = allowed_in_yolo(tool)
        if self.system.approvals.covers(tool.name, key):
            self._log(tool, "approved (always)")
            return Verdict("run", approved=True, reason="always")
        if blanket and self.system.yolo:
            self._log(tool, "approved (YOLO)")
            return Verdict("run", approved=True, reason="yolo")
        if not await needs_asking(tool, self.system):
            # "Approve all pending" answers questions only: a call that asks nothing (a file
            # edit) keeps its own diff review.
            self._log(tool, "runs without approval")
            return Verdict("run")
        if blanket and approve_all:
            self._log(tool, "approved (approve all)")
            return Verdict("run", approved=True, reason="approve_all")
        return await self._ask(tool, key, queued)

    async def decided_by(self, tool: Tool, decide: Callable[[], Awaitable[bool]]) -> Verdict:
        """The verdict when the tool decides its own approval (an older tool's
        `handlers.approved`): deny rules still apply first; True runs, False rejects."""
        key = approval_key(tool)
        if rule_verdict(tool.opts, key, command_argument(tool) is not None) == "deny":
            self._log(tool, "denied by rule", key)
            return Verdict("deny", reason=_denied(tool, key))
        if await decide():
            self._log(tool, "approved by its handlers.approved")
            return Verdict("run", approved=True, reason="approved by the tool")
        self._log(tool, "rejected by its handlers.approved")
        return Verdict("reject")

    async def _ask(
        self, tool: Tool, key: str, queued: int, unsure: tuple[str, ...] = ()
    ) -> Verdict:
        assert tool.call is not None
        argument = command_argument(tool)
        editable = (
            str(tool.args.get(argument, ""))
            if argument is not None
            else json.dumps(tool.args, indent=2, ensure_ascii=False)
        )
        choices: tuple[ApprovalChoice, ...] = ("approve", "always", "reject", "cancel", "edit")
        if queued:
            choices = ("approve", "approve_all", "always", "reject", "cancel", "edit")
        request = ApprovalRequest(
            chat_id=self.system.chat_id,
            tool_name=tool.name,
            call_id=tool.call.id,
            prompt=await prompt_text(tool, self.system) + _why_asked(unsure),
            arguments=dict(tool.args),
            choices=choices,
            editable_text=editable,
            always_scope=_always_scope(tool, key),
        )
        # CodeCompanion's data: `name` when asked, `choice` when answered (the view adds bufnr).
        # These are the only places the two events fire: exactly once per question.
        data = {"id": self.system.chat_id, "name": tool.name, "call_id": tool.call.id}
        self.system.reporter.fire("ToolApprovalRequested", data)
        self.system.reporter.status(tool.call, "awaiting_approval", request.prompt)
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
        self, tool: Tool, key: str, decision: ApprovalDecision, offered_all: bool
    ) -> Verdict:
        choice = decision.choice
        if choice == "approve":
            return Verdict("run", approved=True, reason="approved")
        if choice == "approve_all":
            return Verdict("run", approved=True, reason="approve_all", approve_all=offered_all)
        if choice == "always":
            per_command = _always_scope(tool, key) != "tool"
            self.system.approvals.remember(tool.name, key, per_command)
            return Verdict("run", approved=True, reason="always")
        if choice == "cancel":
            return Verdict("cancel", reason="cancelled by the user")
        if choice == "edit":
            return self._edited(tool, decision.edited)
        if choice == "reject":
            return Verdict("reject", reason=decision.reason or None)
        log.warning("%s: unknown approval choice %r; rejecting", tool.name, choice)
        return Verdict("reject", reason=f"unknown choice {choice!r}")

    def _edited(self, tool: Tool, text: str | None) -> Verdict:
        if text is None:
            return Verdict("run", approved=True, reason="edit without changes")
        result = arguments.edited(
            tool.name, text, tool.args, command_argument(tool), tool.parameters
        )
        if result.args is None:
            self._log(tool, "edit rejected", result.error or "")
            return Verdict("error", reason=result.error)
        edited_key = approval_key(replace(tool, args=result.args))
        if rule_verdict(tool.opts, edited_key, command_argument(tool) is not None) == "deny":
            self._log(tool, "edited call denied by rule", edited_key)
            return Verdict("deny", reason=_denied(tool, edited_key))
        return Verdict("run", approved=True, reason="edited", args=result.args, note=result.note)
