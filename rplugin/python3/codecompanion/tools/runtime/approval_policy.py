"""The approval policy: an ordered list of named rules; the first that speaks decides a question.

Every question the tool system would put to the user (a call's approval, a path outside the
project, git's control files, a redirect to another site, the round cap, a diff review) is a
`Question`; `decide` walks `POLICY` in order and returns the first rule's `Ruling`, or "ask".
`ApprovalMemory` is what the "always" rules consult: the approvals a chat remembers, saved with it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ...outside import Json
from ...ports import Editor
from ...sandbox.settings import Mode
from ..model.calling import as_text
from ..model.contract import Invocation, QuestionKind

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox

log = logging.getLogger("codecompanion.tools")

# Builtin tools that change files in the project; `edits` mode runs them without asking.
_FILE_EDITS = frozenset({"create_file", "insert_edit_into_file", "delete_file"})


@dataclass
class ApprovalMemory:
    """The approvals a chat remembers: whole tools, or single command lines of a tool."""

    tools: set[str] = field(default_factory=set)
    commands: set[tuple[str, str]] = field(default_factory=set)

    def remember(self, name: str, key: str, per_command: bool) -> None:
        """Remember an "always" answer."""
        if per_command:
            self.commands.add((name, key))
        else:
            self.tools.add(name)

    def covers(self, name: str, key: str) -> bool:
        """True if the user already said "always" for this tool (or this exact command)."""
        return name in self.tools or (name, key) in self.commands

    def count(self) -> int:
        """How many approvals are remembered."""
        return len(self.tools) + len(self.commands)

    def to_state(self) -> dict[str, Any]:
        """A JSON-ready copy, for saved chats."""
        return {"tools": sorted(self.tools), "commands": sorted(list(c) for c in self.commands)}

    @classmethod
    def from_state(cls, state: Json) -> ApprovalMemory:
        """Read back `to_state` output; anything malformed is dropped."""
        state = state if isinstance(state, dict) else {}
        tools = {str(name) for name in state.get("tools", []) if isinstance(name, str)}
        commands = {
            (str(item[0]), str(item[1]))
            for item in state.get("commands", [])
            if isinstance(item, (list, tuple)) and len(item) == 2
        }
        return cls(tools, commands)


def blanket_allowed(opts: Mapping[str, Any]) -> bool:
    """True if a tool with these options can be approved tool-wide (as "always" grants it)."""
    return opts.get("allowed_in_yolo_mode", True) is not False and not opts.get(
        "require_cmd_approval"
    )


def restorable(
    memory: ApprovalMemory, tool_opts: Callable[[str], Mapping[str, Any] | None]
) -> tuple[ApprovalMemory, list[str]]:
    """What a saved chat's approvals may restore, and the tools whose tool-wide one is refused.

    A tool-wide approval for a tool "always" never grants tool-wide (run_command,
    delete_file, code_runner...) or a tool that is not there is refused: only a hand-made
    file holds one.
    """
    kept = ApprovalMemory(commands=set(memory.commands))
    refused: list[str] = []
    for name in sorted(memory.tools):
        opts = tool_opts(name)
        if opts is not None and blanket_allowed(opts):
            kept.tools.add(name)
        else:
            refused.append(name)
    return kept, refused


def describe(memory: ApprovalMemory) -> list[str]:
    """One line per remembered approval, as the user is shown them."""
    lines = [f"{name}: every call" for name in sorted(memory.tools)]
    lines += [f"{name}: `{key}`" for name, key in sorted(memory.commands)]
    return lines


# Tools whose approval key and edit text is a shell command line held in this argument.
_COMMAND_ARGUMENT = (("run_command", "cmd"),)


@dataclass(frozen=True)
class HookWord:
    """What the PreToolUse hooks said about asking for a call: "ask" (with their reasons, shown
    in the question) or "allow" (only the user's own hooks may say it)."""

    permission: Literal["allow", "ask"]
    reasons: tuple[str, ...] = ()

    @property
    def asks(self) -> bool:
        """True when a hook asks for the user's word."""
        return self.permission == "ask"


@dataclass(frozen=True)
class Question:
    """One question for the gate; `tool` is the call it is about (if any)."""

    kind: QuestionKind
    text: str = ""
    tool: Invocation | None = None
    approve_all: bool = False  # the user chose "approve all pending" earlier in the batch
    hook: HookWord | None = None  # the PreToolUse hooks' word on asking for this call

    @cached_property
    def key(self) -> str:
        """The call's approval key, worked out once for every rule of one decision."""
        assert self.tool is not None
        return approval_key(self.tool)


@dataclass(frozen=True)
class Ruling:
    """A rule's answer: allow without asking, deny, or ask the user (with `doubts` shown)."""

    action: Literal["allow", "deny", "ask"]
    reason: str = ""
    approved: bool = True  # an allow that counts as the user's approval (False: none needed)
    doubts: tuple[str, ...] = ()


class PolicyContext(Protocol):
    """What the rules read from the tool system."""

    yolo: bool
    approvals: ApprovalMemory
    sandbox: CommandSandbox | None

    @property
    def mode(self) -> Mode:
        """The chat's permission mode."""
        ...

    @property
    def editor(self) -> Editor | None:
        """The editor port, or None without one."""
        ...


class Rule(Protocol):
    """One named step of the policy; None lets the next rule speak."""

    @property
    def name(self) -> str:
        """The rule's name, as logs and docs show it."""
        ...

    @property
    def kinds(self) -> frozenset[QuestionKind]:
        """The kinds of question this rule speaks to."""
        ...

    async def rule(self, question: Question, context: PolicyContext) -> Ruling | None:
        """The ruling for `question`, or None when this rule has nothing to say."""
        ...


def command_argument(tool: Invocation) -> str | None:
    """The argument holding a shell command line (run_command: `cmd`), if the tool has one."""
    configured = tool.opts.get("command_arg")
    if isinstance(configured, str):
        return configured
    return dict(_COMMAND_ARGUMENT).get(tool.name)


def approval_key(tool: Invocation, args: dict[str, Any] | None = None) -> str:
    """The text rules match and "always" remembers: the command line, or the arguments as JSON
    (of the call's arguments, or of `args`: an edit of them)."""
    args = tool.args if args is None else args
    custom = tool.opts.get("approval_key")
    if callable(custom):
        return as_text(custom(args))
    argument = command_argument(tool)
    if argument is not None and isinstance(args.get(argument), str):
        return str(args[argument])
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


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
    from . import shell_rules  # ~0.5 MiB of the host: loaded by a chat's first command

    reading = shell_rules.read(key)
    if deny and shell_rules.deny_matches(reading, key, deny):
        return "deny"
    return "allow" if shell_rules.allow_matches(reading, allow) else None


def doubts(tool: Invocation, key: str) -> tuple[str, ...]:
    """Why the rules cannot tell what a shell line runs (empty: they can, or it is no shell)."""
    if command_argument(tool) is None:
        return ()
    from . import shell_rules

    reading = shell_rules.read(key)
    if reading.certain:
        return ()
    return reading.doubts or ("a command name the shell computes",)


def allowed_in_yolo(tool: Invocation) -> bool:
    """False for tools too dangerous for blanket approvals (YOLO, approve_all, tool-wide always)."""
    return tool.opts.get("allowed_in_yolo_mode", True) is not False


def leaves_sandbox(tool: Invocation) -> bool:
    """True for a call that asks to run its command outside the sandbox."""
    return tool.opts.get("sandboxed") is True and tool.args.get("unconfined") is True


def memory_name(tool: Invocation) -> str:
    """The name "always" is remembered under: an unconfined run is remembered on its own."""
    return f"{tool.name} (unconfined)" if leaves_sandbox(tool) else tool.name


def confined(context: PolicyContext) -> bool:
    """True when the chat's commands run in a working sandbox."""
    return context.sandbox is not None and context.sandbox.active


async def needs_asking(tool: Invocation) -> bool:
    """Whether to ask: the call's own answer (`requires_approval`, a tool's condition); a
    condition that fails asks."""
    try:
        return await tool.needs_asking()
    except Exception:
        log.exception("%s: approval condition failed; asking the user", tool.name)
        return True


def denied_message(tool: Invocation, key: str) -> str:
    """The result text of a call a deny rule refused."""
    return (
        f"The {tool.name} call was denied by rule: `{key}` matches a deny pattern in the "
        "user's configuration, so it did not run."
    )


def _call(question: Question) -> tuple[Invocation, str]:
    assert question.tool is not None
    return question.tool, question.key


_CALL: frozenset[QuestionKind] = frozenset({"call"})
_CALL_AND_REVIEW: frozenset[QuestionKind] = frozenset({"call", "diff_review"})


@dataclass(frozen=True)
class PolicyRule:
    """A rule of the policy: its name, the kinds it speaks to, and the check that rules."""

    name: str
    kinds: frozenset[QuestionKind]
    check: Callable[[Question, PolicyContext], Awaitable[Ruling | None]]

    async def rule(self, question: Question, context: PolicyContext) -> Ruling | None:
        """The check's ruling, or None to let the next rule speak."""
        return await self.check(question, context)


async def _deny_rules(question: Question, context: PolicyContext) -> Ruling | None:
    # The user's `deny` patterns refuse a call whose line or one of its commands matches.
    tool, key = _call(question)
    if rule_verdict({"deny": tool.opts.get("deny")}, key, command_argument(tool) is not None):
        return Ruling("deny", denied_message(tool, key))
    return None


async def _hook_asks(question: Question, context: PolicyContext) -> Ruling | None:
    # A PreToolUse hook that asks gets a question, whatever the rules, "always" or YOLO say
    # (the doubts about a line it runs are shown too).
    if question.hook is None or not question.hook.asks:
        return None
    return Ruling("ask", "a hook asks", doubts=doubts(*_call(question)))


async def _hook_allows(question: Question, context: PolicyContext) -> Ruling | None:
    # The user's own PreToolUse hook that allows a call spares its question, as an allow rule
    # would; what must always be asked (a call written as text, leaving the sandbox, a line the
    # rules cannot read) is decided before it, and paths outside the project are questions of
    # their own.
    if question.hook is None or question.hook.asks:
        return None
    return Ruling("allow", "allowed by a hook")


async def _text_call_asks(question: Question, context: PolicyContext) -> Ruling | None:
    # A call read from the answer's text (recovered, or a prompt-mode block with prose after
    # it) is asked about: the model may be quoting text it read.
    assert question.tool is not None
    if question.tool.call is not None and question.tool.call.asks:
        return Ruling("ask", "the model wrote this call as text")
    return None


async def _leaving_sandbox(question: Question, context: PolicyContext) -> Ruling | None:
    # A command that asks to run outside the sandbox is asked about in every mode, unless the
    # user said "always" for this exact command unconfined.
    tool, key = _call(question)
    if not leaves_sandbox(tool) or not confined(context):
        return None
    if (memory_name(tool), key) in context.approvals.commands:
        return Ruling("allow", "always (unconfined)")
    return Ruling("ask", "it asks to run outside the sandbox")


async def _allow_rules(question: Question, context: PolicyContext) -> Ruling | None:
    # The user's `allow` patterns run a line the reader is sure about whose every command matches.
    tool, key = _call(question)
    if rule_verdict(tool.opts, key, command_argument(tool) is not None) == "allow":
        return Ruling("allow", "allowed by rule")
    return None


async def _sandboxed_command(question: Question, context: PolicyContext) -> Ruling | None:
    # In `sandboxed` and `yolo` modes a confined command runs without asking: the sandbox
    # stands in for the user.
    tool = question.tool
    assert tool is not None
    if context.mode in ("sandboxed", "yolo") and tool.runs_commands and confined(context):
        return Ruling("allow", "sandboxed")
    return None


async def _edits_mode(question: Question, context: PolicyContext) -> Ruling | None:
    # In `edits`, `sandboxed` and `yolo` modes file edits in the project run and are written
    # unreviewed (paths outside and git's files are still asked; a tool kept out of YOLO, such
    # as delete_file, still asks).
    if context.mode not in ("edits", "sandboxed", "yolo"):
        return None
    tool = question.tool
    if question.kind == "diff_review" or (
        tool is not None and tool.name in _FILE_EDITS and allowed_in_yolo(tool)
    ):
        return Ruling("allow", "edits mode")
    return None


async def _remembered_command(question: Question, context: PolicyContext) -> Ruling | None:
    # The user said "always" for this exact command line (or these arguments).
    tool, key = _call(question)
    if (tool.name, key) in context.approvals.commands:
        return Ruling("allow", "always")
    return None


async def _unreadable_line(question: Question, context: PolicyContext) -> Ruling | None:
    # A line the rules cannot read is asked about (naming why), whatever the rules below say.
    unsure = doubts(*_call(question))
    if not unsure:
        return None
    return Ruling("ask", "the rules cannot tell what it runs", doubts=unsure)


async def _remembered_tool(question: Question, context: PolicyContext) -> Ruling | None:
    # The user said "always" for the whole tool.
    tool, key = _call(question)
    return Ruling("allow", "always") if context.approvals.covers(tool.name, key) else None


async def _yolo(question: Question, context: PolicyContext) -> Ruling | None:
    # YOLO approves calls and spares diff reviews (never for tools that opt out of it).
    if not context.yolo:
        return None
    if question.kind == "diff_review" or (
        question.tool is not None and allowed_in_yolo(question.tool)
    ):
        return Ruling("allow", "yolo")
    return None


async def _needs_no_approval(question: Question, context: PolicyContext) -> Ruling | None:
    # A call whose tool asks for no approval (`requires_approval`, `prompt_condition`) runs as
    # unapproved; its diff review still comes.
    assert question.tool is not None
    if await needs_asking(question.tool):
        return None
    return Ruling("allow", "runs without approval", approved=False)


async def _approve_all(question: Question, context: PolicyContext) -> Ruling | None:
    # The user's "approve all pending" earlier in this batch approves the rest of it (only for
    # tools that allow blanket approvals).
    if question.approve_all and question.tool is not None and allowed_in_yolo(question.tool):
        return Ruling("allow", "approve_all")
    return None


async def _approved_edit(question: Question, context: PolicyContext) -> Ruling | None:
    # An edit whose call was approved is not reviewed again; nor is one no editor can show.
    approved = question.tool is not None and question.tool.approved
    if approved or context.editor is None:
        return Ruling("allow", "approved call" if approved else "no editor", approved=False)
    return None


# Order is the policy: deny before anything; a hook's "ask" before anything that allows;
# leaving the sandbox is always a question; the sandbox (in the modes that trust it) before the
# doubt about a line, since the kernel, not the reader, bounds what it does; a remembered exact
# line before that doubt; the doubt before anything blanket (a hook's "allow", a tool-wide
# "always", YOLO, approve-all).
POLICY: tuple[Rule, ...] = (
    PolicyRule("deny rules", _CALL, _deny_rules),
    PolicyRule("hook asks", _CALL, _hook_asks),
    PolicyRule("call written as text", _CALL, _text_call_asks),
    PolicyRule("leaving the sandbox", _CALL, _leaving_sandbox),
    PolicyRule("allow rules", _CALL, _allow_rules),
    PolicyRule("sandboxed command", _CALL, _sandboxed_command),
    PolicyRule("edits mode", _CALL_AND_REVIEW, _edits_mode),
    PolicyRule("always (this command)", _CALL, _remembered_command),
    PolicyRule("unreadable command line", _CALL, _unreadable_line),
    PolicyRule("hook allows", _CALL, _hook_allows),
    PolicyRule("always (this tool)", _CALL, _remembered_tool),
    PolicyRule("yolo", _CALL_AND_REVIEW, _yolo),
    PolicyRule("tool needs no approval", _CALL, _needs_no_approval),
    PolicyRule("approve all pending", _CALL, _approve_all),
    PolicyRule("approved edit", frozenset({"diff_review"}), _approved_edit),
)


async def decide(
    question: Question, context: PolicyContext, policy: tuple[Rule, ...] | None = None
) -> tuple[str, Ruling]:
    """The first rule that speaks to `question`: (its name, its ruling); else ("ask", ask)."""
    for step in POLICY if policy is None else policy:
        if question.kind in step.kinds:
            ruling = await step.rule(question, context)
            if ruling is not None:
                return step.name, ruling
    return "ask", Ruling("ask")


def rules_for(kind: QuestionKind) -> list[str]:
    """The names of the rules that speak to `kind`, in order (for docs and tests)."""
    return [step.name for step in POLICY if kind in step.kinds]
