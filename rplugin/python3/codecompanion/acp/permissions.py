"""`session/request_permission` through the chat's approval question and rules.

Deny rules (of the builtin tool an agent's call resembles: `run_command` for `execute`, the
file tools for edits) refuse without asking; an answer the user gave "always" or "never" for
the same call in this chat answers again; YOLO allows; otherwise the user picks among the
agent's own options, shown as the chat's usual choices. A reject rejects that call only, never
the turn: the question closed without an answer counts as a reject.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from ..chat.driver import Session
from ..messages import ToolCall
from ..ports import ApprovalChoice, ApprovalDecision, ApprovalRequest
from ..tools.runtime.approval_policy import rule_verdict

log = logging.getLogger("codecompanion.acp")

# The option kinds each of the chat's choices stands for, the first the agent offers wins.
KINDS: dict[ApprovalChoice, tuple[str, ...]] = {
    "approve": ("allow_once", "allow_always"),
    "always": ("allow_always", "allow_once"),
    "reject": ("reject_once", "reject_always"),
    "never": ("reject_always", "reject_once"),
}
# The builtin tool whose deny rules an agent's call of this kind is held to, and whether its
# key is a command line.
RULES_OF: dict[str, tuple[str, bool]] = {
    "execute": ("run_command", True),
    "edit": ("insert_edit_into_file", False),
    "delete": ("delete_file", False),
    "move": ("insert_edit_into_file", False),
    "read": ("read_file", False),
    "search": ("grep_search", False),
    "fetch": ("fetch_webpage", False),
}


KIND_NAMES = frozenset(
    {
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    }
)


class AgentPermissions:
    """One chat's answers to its agent's permission questions."""

    def __init__(
        self,
        chat: Session,
        agent: str,
        describe: Callable[[ToolCallUpdate], str],
        known: Callable[[str], tuple[ToolCall, str] | None],
    ) -> None:
        self.chat = chat
        self.agent = agent
        self._describe = describe  # the call's content as text (a diff, a command)
        self._known = known  # the call as the agent announced it (kind, input), if it did
        self.remembered: dict[tuple[str, str], ApprovalChoice] = {}
        self.allowed_execute: Callable[[], None] = lambda: None  # a command may run
        self.announce: Callable[[ToolCallUpdate], None] = lambda _call: None  # draws the call
        self._asking: set[asyncio.Task[ApprovalDecision]] = set()

    async def request_permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """The option the rules or the user chose."""
        tool_call = self._completed(tool_call)
        self.announce(tool_call)
        kind = tool_call.kind or "other"
        key = call_key(tool_call)
        choice = self._ruled(kind, key)
        if choice is None:
            choice = await self._ask(tool_call, kind, options)
        if choice in ("always", "never"):
            self.remembered[(kind, key)] = choice
        option = pick(options, choice)
        if option is None:  # the turn is being cancelled (or nothing fits the answer)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if kind == "execute" and option.kind.startswith("allow"):
            self.allowed_execute()
        log.info("chat %s: %s's %s %r: %s", self.chat.id, self.agent, kind, key, option.kind)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    def _completed(self, tool_call: ToolCallUpdate) -> ToolCallUpdate:
        """The question's call with the kind, title and input its announcement gave (agents
        often ask about a call by its id alone)."""
        found = self._known(tool_call.tool_call_id)
        if found is None:
            return tool_call
        known, title = found
        extra: dict[str, Any] = {}
        if tool_call.kind is None and known.name in KIND_NAMES:
            extra["kind"] = known.name
        if tool_call.raw_input is None and known.arguments:
            extra["raw_input"] = dict(known.arguments)
        if tool_call.title is None and title:
            extra["title"] = title
        return tool_call.model_copy(update=extra) if extra else tool_call

    def _ruled(self, kind: str, key: str) -> ApprovalChoice | None:
        """What deny rules, an earlier always/never or YOLO decide; None: ask."""
        tool, shell = RULES_OF.get(kind, ("", False))
        entry = self.chat.tools.registry.get(tool) if tool else None
        if entry is not None:
            deny = entry.tool.opts.get("deny")
            if rule_verdict({"deny": deny}, key, shell) == "deny":
                self.chat.view.notify(f"{self.agent}: `{key}` refused by a deny rule", "warn")
                return "reject"
        remembered = self.remembered.get((kind, key))
        if remembered is not None:
            return remembered
        if self.chat.tools.yolo or self.chat.tools.mode == "yolo":
            return "approve"
        return None

    async def _ask(
        self, tool_call: ToolCallUpdate, kind: str, options: list[PermissionOption]
    ) -> ApprovalChoice:
        offered = {option.kind for option in options}
        choices = tuple(c for c, kinds in KINDS.items() if kinds[0] in offered)
        arguments = _arguments(tool_call)
        shown = self._describe(tool_call)
        if shown:
            arguments["content"] = shown
        always = _always_means(options)
        if always:
            arguments["always"] = always  # shown in the preview with the call
        request = ApprovalRequest(
            chat_id=self.chat.id,
            tool_name=f"{self.agent} · {kind}",
            call_id=tool_call.tool_call_id,
            prompt=f"{self.agent} asks: {tool_call.title or kind}",
            arguments=arguments,
            choices=choices or ("approve", "reject"),
            always_scope="arguments",
        )
        asking = asyncio.get_running_loop().create_task(self.chat.tools.approver.ask(request))
        self._asking.add(asking)
        try:
            await asyncio.wait({asking})
        finally:
            self._asking.discard(asking)
        if asking.cancelled():
            return "cancel"
        decision = asking.result()
        return decision.choice if decision.choice in KINDS else "reject"

    def cancel(self) -> None:
        """The turn is being cancelled: questions still open are answered `cancelled`."""
        for asking in list(self._asking):
            asking.cancel()


def _always_means(options: list[PermissionOption]) -> str:
    """What "always" grants in the agent's words: an agent's "always" may reach further than
    this call (Qwen Code's is a wildcard rule it writes into the project's settings)."""
    option = pick(options, "always")
    if option is None or option.kind != "allow_always":
        return ""
    return option.name


def pick(options: list[PermissionOption], choice: ApprovalChoice) -> PermissionOption | None:
    """The agent's option for the chat's choice (the nearest kind it offers)."""
    for kind in KINDS.get(choice, ()):
        for option in options:
            if option.kind == kind:
                return option
    return None


def call_key(tool_call: ToolCallUpdate) -> str:
    """What rules match and answers are remembered by: a command line, a path, or the title."""
    raw = tool_call.raw_input
    if isinstance(raw, dict):
        for name in ("command", "cmd"):
            value = raw.get(name)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return " ".join(value)
        for name in ("path", "file_path", "filepath", "abs_path"):
            if isinstance(raw.get(name), str):
                return str(raw[name])
    if tool_call.locations:
        return tool_call.locations[0].path
    return tool_call.title or tool_call.tool_call_id


def _arguments(tool_call: ToolCallUpdate) -> dict[str, Any]:
    raw = tool_call.raw_input
    if isinstance(raw, dict):
        return {str(k): v for k, v in raw.items()}
    if raw is None:
        return {}
    return {"input": raw if isinstance(raw, str) else json.dumps(raw)}
