"""The tool system of one chat: which tools it offers, running a batch of calls, auto-submit."""

from __future__ import annotations

import logging
import os
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ...messages import MENTION, Status, ToolCall
from ...ports import Approver, Editor, EventSink
from ...sandbox.settings import MODES, Mode
from ...transport.tls import LazyContext, build_trust
from ..model.arguments import resolve
from ..model.contract import QuestionKind, Questions, Subagents, ToolContext
from ..model.function_tool import timeout_seconds
from ..model.registry import ToolEntry, ToolRegistry
from .approval_policy import ApprovalMemory
from .approvals import ApprovalGate, CallQuestions
from .child_env import EnvPolicy
from .command_runner import CommandRunner
from .orchestrator import Orchestrator
from .protocol import ChatForTools, Reporter

if TYPE_CHECKING:
    from ...after_edit.runs import ProjectChecks
    from ...hooks import ChatHooks
    from ...sandbox.commands import CommandSandbox
    from ...skills import ChatSkills

log = logging.getLogger("codecompanion.tools")

DEFAULT_OPTS: Mapping[str, Any] = MappingProxyType(
    {
        "auto_submit": True,  # send results back to the model after a batch
        "max_auto_rounds": 20,  # consecutive automatic rounds before asking the user
        "timeout": 300.0,  # seconds per cmd (and per callback); None for no limit
        "max_output": 50_000,  # characters of a result sent to the model
        "max_process_bytes": 1_000_000,  # bytes kept per output stream of a command
        "tool_replacement_message": "the ${tool} tool",
        # First sentences only: True, "auto" (a window of at most 8k), or False (measured: the
        # 1.5B model at 4k solved fewer tasks with them, so off unless asked for).
        "short_descriptions": False,
    }
)


@dataclass(frozen=True)
class BatchSummary:
    """How a batch ended, and whether the chat should send the results back on its own."""

    status: Literal["success", "error", "cancelled"]
    auto_submit: bool
    results: int
    statuses: dict[str, Status] = field(default_factory=dict)


class ChatNotes:
    """The chat as tool code reaches it (`ToolContext.chat`): its id, messages for the model
    (added after the batch's results: a message between a call and its result would break the
    request), and commands' flags."""

    def __init__(self, chat: ChatForTools) -> None:
        self._chat = chat
        self.flags: dict[str, bool] = {}  # CodeCompanion's `chat.tool_registry.flags`
        self.pending: list[tuple[str, str, bool]] = []  # (role, content, visible)

    @property
    def id(self) -> str:
        """The chat's id."""
        return self._chat.id

    def add_message(self, role: str, content: str, visible: bool = True) -> None:
        """A message for the model, added once the batch's results are in."""
        self.pending.append((role, content, visible))


class ToolSystem:
    """One chat's tools: offered tools and groups, approvals it remembers, and batches of calls.

    Tool code never sees it: each call gets a ToolContext made here (`tool_context`).
    """

    def __init__(
        self,
        *,
        chat: ChatForTools,
        registry: ToolRegistry,
        approver: Approver,
        events: EventSink,
        cwd: Path | str,
        editor: Editor | None = None,
        opts: Mapping[str, Any] | None = None,
        yolo: bool = False,
        tls: Callable[[], ssl.SSLContext] | None = None,
        sandbox: CommandSandbox | None = None,
        mode: Mode = "ask",
        checks: Callable[[], ProjectChecks] | None = None,
    ) -> None:
        self.chat = chat
        self.notes = ChatNotes(chat)
        # The host's one context when given (Workspace.ssl_context), else this system's own.
        self._tls = LazyContext(tls or (lambda: build_trust(os.environ).context))
        self.registry = registry
        self.approver = approver
        self.events = events
        self.reporter = Reporter(chat, events)
        self.cwd = Path(cwd).resolve()
        self.editor = editor
        self.opts: dict[str, Any] = {**DEFAULT_OPTS, **(opts or {})}
        self.yolo = yolo or mode == "yolo"
        self._mode: Mode = "ask" if mode == "yolo" else mode  # the mode YOLO falls back to
        self.sandbox = sandbox  # None: commands run unconfined
        self.offered: list[str] = []
        self.groups: list[str] = []
        self.short_schemas = False  # set by fit_window once the model's window is known
        self.approvals = ApprovalMemory()
        self.auto_rounds = 0
        self.commands = CommandRunner(self)
        self._make_checks = checks
        self._checks: ProjectChecks | None = None
        self.edited: list[Path] = []  # files the file tools changed in the running batch
        self._running: set[Orchestrator] = set()
        self.skills: ChatSkills | None = None  # the chat's skills (the `skill` tool reads them)
        self.hooks: ChatHooks | None = None  # run around each call (PreToolUse, PostToolUse)
        # The chat's subagents (a subagents.ChatAgents): the tool system sits below them (they
        # build tool systems), so it knows them by what the `agent` tool needs of them.
        self.agents: Subagents | None = None
        for name in self.opts.get("default_tools") or []:
            if not self.add_group(name) and not self.add_tool(name):
                log.warning("default tool %s does not exist", name)

    @property
    def root(self) -> Path:
        """The project root (what resolving a path reads, as from a call's ToolContext)."""
        return self.cwd

    @property
    def checks(self) -> ProjectChecks | None:
        """The project's checks, run after a round that edited files: made at their first use,
        so a chat that edits nothing never loads them (after_edit/)."""
        if self._checks is None and self._make_checks is not None:
            self._checks = self._make_checks()
        return self._checks

    @property
    def chat_id(self) -> str:
        """The chat's id (events carry it instead of a buffer number)."""
        return self.chat.id

    @property
    def mode(self) -> Mode:
        """The chat's permission mode: ask, edits, sandboxed or yolo (YOLO on wins)."""
        return "yolo" if self.yolo else self._mode

    @mode.setter
    def mode(self, value: Mode) -> None:
        self.yolo = value == "yolo"
        if value != "yolo":
            self._mode = value

    @property
    def running(self) -> bool:
        """True while a batch runs."""
        return bool(self._running)

    async def tls_context(self) -> ssl.SSLContext:
        """The TLS context web tools connect with (see tls.py), built once, off the loop."""
        return await self._tls.get()

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """Ask the user a yes/no question through the approval gate; False when it cannot."""
        return await ApprovalGate(self).confirm(kind, question)

    def environment(self) -> dict[str, str]:
        """The environment a tool process gets: ours without keys, tokens and Neovim's socket
        (and what `opts.env` drops or passes; see child_env)."""
        return EnvPolicy.from_opts(self.opts.get("env")).environment()

    def tool_context(
        self, call: ToolCall, opts: Mapping[str, Any], asks: Questions, cancel: Callable[[], None]
    ) -> ToolContext:
        """What the code of `call` gets (the tool's `opts`, the user's merged in)."""
        default = self.opts["timeout"]
        return ToolContext(
            root=self.cwd,
            call=call,
            opts=opts,
            timeout=timeout_seconds(opts, None if default is None else float(default)),
            mode=self.mode,
            editor=self.editor,
            sandbox=self.sandbox,
            environment=self.environment,
            asks=asks,
            commands=self.commands,
            events=self.reporter,
            chat=self.notes,
            tls=self.tls_context,
            cancel=cancel,
            edited=self.edited,
            chat_opts=self.opts,
            skills=self.skills,
            agents=self.agents,
        )

    def question_context(self, call: ToolCall, opts: Mapping[str, Any]) -> ToolContext:
        """A ToolContext for tool code run outside a batch (`/fetch`): its questions go through
        this chat's approval gate."""
        return self.tool_context(call, opts, CallQuestions(ApprovalGate(self)), _nothing)

    # Offering tools

    def add_tool(self, name: str) -> bool:
        """Offer an enabled tool for the rest of the chat; False if there is none by that name."""
        if self.registry.get(name) is None:
            return False
        if name not in self.offered:
            self.offered.append(name)
            self.reporter.fire("ChatToolAdded", {"id": self.chat_id, "tool": name})
        return True

    def add_group(self, name: str) -> bool:
        """Offer every enabled tool of a group; False if there is no such group."""
        group = self.registry.group(name)
        if group is None:
            return False
        for tool_name in group.tools:
            self.add_tool(tool_name)
        if name not in self.groups:
            self.groups.append(name)
        return True

    async def prepare(self) -> list[str]:
        """Make the tools of offered groups that start on demand (MCP servers); one line each
        for those that cannot start (the chat goes on without their tools)."""
        problems: list[str] = []
        for name in list(self.groups):
            if not self.registry.is_lazy(name):
                continue
            known = len(self.registry.errors)
            try:
                tools = await self.registry.load_group(name)
            except Exception as exc:
                problems.append(" ".join(str(exc).split()) or f"{name}: failed")
                continue
            problems += self.registry.errors[known:]  # a tool renamed so as to replace none
            for tool_name in tools:
                self.add_tool(tool_name)
        return problems

    def read_only(self, calls: list[ToolCall]) -> bool:
        """True when every call is of an offered read_only tool (quick, nothing to undo)."""
        entries = (self.offered_entry(call.name) for call in calls)
        return all(entry is not None and entry.opts.get("read_only") for entry in entries)

    def offered_entry(self, name: str) -> ToolEntry | None:
        """The entry of `name` if this chat offers it and it is still enabled."""
        return self.registry.get(name) if name in self.offered else None

    def malformed(self, call: ToolCall) -> bool:
        """Whether the call will be refused unrun: no such tool offered, or arguments that are
        not a JSON object or break the tool's schema (the turn's call guard counts these)."""
        entry = self.offered_entry(call.name)
        if entry is None:
            return True
        schema, validator = entry.tool.parameters, entry.validator()
        return (
            resolve(call.name, call.arguments, call.raw_arguments, schema, validator).args is None
        )

    def not_offered_message(self, name: str) -> str:
        """The error result for a call of a tool this chat does not offer."""
        names = [n for n in self.offered if self.registry.get(n) is not None]
        listed = ", ".join(f"`{n}`" for n in names)
        available = f"The tools available are: {listed}." if names else "No tools are available."
        return f"The tool `{name}` is not available in this chat. {available}"

    def parse_user_message(self, text: str) -> str:
        """Offer each `@{tool}`/`@{group}` mentioned and replace the mention with plain words."""

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            group = self.registry.group(name)
            is_tool = self.add_tool(name)
            if group is not None:
                self.add_group(name)
                return self._group_text(name)
            if is_tool:
                template = str(self.opts["tool_replacement_message"])
                return template.replace("${tool}", name)
            return match.group(0)

        return MENTION.sub(replace, text)

    def _group_text(self, name: str) -> str:
        group = self.registry.group(name)
        assert group is not None
        members = [t for t in group.tools if self.registry.get(t) is not None]
        listing = f"the {', '.join(members)} tools"
        return group.prompt.replace("${tools}", listing) if group.prompt else listing

    def schemas(self) -> list[dict[str, Any]]:
        """The offered tools' schemas in OpenAI function form, in the order they were added
        (their descriptions cut to a first sentence for a small window: `fit_window`)."""
        entries = (self.registry.get(name) for name in self.offered)
        schemas = [entry.tool.openai_schema() for entry in entries if entry is not None]
        if not self.short_schemas:
            return schemas
        from ..model.short_schema import shortened

        return [shortened(schema) for schema in schemas]

    def fit_window(self, window: int | None) -> None:
        """The model's window is known: short schemas from now on if it is small (the setting
        `short_descriptions`); the same for every request of the chat, so its prefix holds."""
        if not self.offered:
            return  # a chat without tools loads none of this
        from ..model.short_schema import wants_short

        self.short_schemas = wants_short(self.opts.get("short_descriptions"), window)

    def system_prompts(self) -> list[tuple[str, str]]:
        """(tag, text) for each offered tool's and group's system prompt, once each."""
        prompts: list[tuple[str, str]] = []
        for name in self.offered:
            entry = self.registry.get(name)
            try:
                text = entry.tool.prompt_text() if entry is not None else None
            except Exception:
                log.exception("tool %s: system_prompt failed", name)
                text = None
            if text:
                prompts.append((f"<tool>{name}</tool>", text))
        for name in self.groups:
            group = self.registry.group(name)
            if group is not None and group.system_prompt:
                prompts.append((f"<group>{name}</group>", group.system_prompt))
        return prompts

    # Running calls

    async def run(self, calls: list[ToolCall]) -> BatchSummary:
        """Run a batch of calls; every call id gets exactly one result recorded on the chat."""
        if not calls:
            return BatchSummary("success", False, 0)
        orchestrator = Orchestrator(self, calls)
        self._running.add(orchestrator)
        self.edited = []
        try:
            statuses = await orchestrator.run()
            if self.edited and self.checks is not None and not orchestrator.cancelled:
                from .after_round import check_round

                await check_round(self, self.checks, list(self.edited))
        finally:
            self._running.discard(orchestrator)
            self._add_pending_messages()
        status: Literal["success", "error", "cancelled"] = "error"
        if orchestrator.cancelled:
            status = "cancelled"
        elif all(s == "success" for s in statuses.values()):
            status = "success"
        auto = status != "cancelled" and bool(self.opts["auto_submit"]) and await self._next_round()
        return BatchSummary(status, auto, len(statuses), statuses)

    def _add_pending_messages(self) -> None:
        """Hand the chat the messages tool code added during the batch, after the results."""
        pending, self.notes.pending = self.notes.pending, []
        for role, content, visible in pending:
            try:
                self.chat.add_tool_message(role, content, visible)
            except Exception:
                log.exception("chat %s: adding a message from a tool failed", self.chat_id)

    async def _next_round(self) -> bool:
        """Count an automatic round; past the cap, ask the user whether to go on."""
        self.auto_rounds += 1
        cap = int(self.opts["max_auto_rounds"])
        if self.auto_rounds <= cap:
            return True
        question = f"The model has used tools {cap} times in a row on its own. Continue?"
        if await self.confirm(question, "round_cap"):
            self.auto_rounds = 1
            return True
        return False

    def reset_rounds(self) -> None:
        """The user submitted: automatic rounds count from zero again."""
        self.auto_rounds = 0

    def cancel(self) -> None:
        """Cancel the running batch: stop the running tool, drop pending approvals, answer all."""
        for orchestrator in list(self._running):
            orchestrator.cancel()

    def reconfigure(self, registry: ToolRegistry, opts: Mapping[str, Any] | None) -> list[str]:
        """Take a reloaded config: its tools and options; the offered tools stay offered.

        Returns the offered tools the new config no longer has (calls to them are refused
        with "not available" until it has them again).
        """
        # An offered group that starts on demand (an MCP server) makes its tools again at the
        # next call: they are not gone, only not made yet.
        again: set[str] = set()
        for name in self.groups:
            old = self.registry.group(name)
            if old is not None and registry.is_lazy(name):
                again.update(old.tools)
        self.registry = registry
        kept = {key: self.opts[key] for key in ("default_tools",) if key in self.opts}
        self.opts = {**DEFAULT_OPTS, **(opts or {}), **kept}
        return [n for n in self.offered if registry.get(n) is None and n not in again]

    def forget_approvals(self) -> int:
        """Forget every remembered ("always") approval and turn YOLO off; how many were there."""
        count = self.approvals.count()
        self.approvals = ApprovalMemory()
        self.yolo = False
        return count

    # Saved chats

    def to_state(self) -> dict[str, Any]:
        """Offered tools and groups, YOLO and remembered approvals, JSON-ready."""
        return {
            "tools": list(self.offered),
            "groups": list(self.groups),
            "yolo": self.yolo,
            "mode": self._mode,
            "approvals": self.approvals.to_state(),
            "skills_off": sorted(self.skills.disabled) if self.skills is not None else [],
        }

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Restore `to_state` output; tools that no longer exist are skipped (and logged)."""
        for name in state.get("groups") or []:
            if not self.add_group(str(name)):
                log.warning("saved chat offered group %s, which no longer exists", name)
        for name in state.get("tools") or []:
            if not self.add_tool(str(name)):
                log.warning("saved chat offered tool %s, which is no longer available", name)
        self.yolo = bool(state.get("yolo", self.yolo))
        if state.get("mode") in MODES:
            self._mode = state["mode"]
        self.approvals = ApprovalMemory.from_state(state.get("approvals"))
        if self.skills is not None and isinstance(state.get("skills_off"), list):
            self.skills.restore(state["skills_off"])


def _nothing() -> None:
    """A cancel with no batch to stop."""
