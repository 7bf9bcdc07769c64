"""An agent's `session/update`s as the chat shows and keeps them: streamed text and thoughts,
tool calls with their kind, title, locations and content (diffs as diffs), plans as a checklist
rewritten in place, and the session's commands, mode, config options, title and usage in the
buffer's variables and the meter."""

from __future__ import annotations

import difflib
import json
from typing import Any, Literal, Protocol

from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    PlanEntry,
    PlanUpdateItems,
    SessionInfoUpdate,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from ..chat import transcript
from ..chat.driver import Session
from ..messages import Message, Status, ToolCall, ToolResult
from ..render_ops import Header, Meter, Plan, Spinner, Tool, ToolStatus
from .client import Update
from .content import block_text
from .session_state import AgentSessionState

# The agent's tool call statuses as the chat's tool lines show them.
TOOL_STATUS = {
    "pending": "pending",
    "in_progress": "running",
    "completed": "success",
    "failed": "error",
}
RESULT: dict[str, Status] = {"completed": "success", "failed": "error"}
PLAN_MARK = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TitledSession(Session, Protocol):
    """A session whose title the agent may set (a chat's; a subagent's has none)."""

    title: str | None


class AgentUpdates:
    """Takes one chat's updates in the order the agent sent them."""

    def __init__(self, chat: TitledSession, state: AgentSessionState, terminal_text: Any) -> None:
        self.chat = chat
        self.state = state
        self._terminal_text = terminal_text  # terminal id -> its output so far
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self._thinking = False
        self._separate = False  # the next text starts on a fresh line (after a tool line)
        self.calls: dict[str, ToolCall] = {}
        self.titles: dict[str, str] = {}
        self._plans: dict[str, Message] = {}
        self.turn = 0
        # While a session loads, the agent replays it: shown when the chat has none of it.
        self.replay: str | None = None  # None, "show" or "quiet"
        self._replay_role: Literal["user", "llm"] | None = None

    # ----- dispatch --------------------------------------------------------------------------

    def update(self, update: Update) -> None:
        """One update, applied now."""
        if isinstance(update, (AgentMessageChunk, AgentThoughtChunk, UserMessageChunk)):
            self._chunk(update)
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            self._tool(update)
        elif isinstance(update, AgentPlanUpdate):
            self._plan("plan", update.entries)
        elif isinstance(update, AgentPlanContentUpdate):
            self._plan_content(update)
        elif isinstance(update, AgentPlanRemovedUpdate):
            self._plan(update.plan_id, [])
        else:
            self._session(update)

    def _session(self, update: Update) -> None:
        state = self.state
        if isinstance(update, AvailableCommandsUpdate):
            state.commands = list(update.available_commands)
            self.chat.view.render([state.commands_var()])
        elif isinstance(update, CurrentModeUpdate):
            state.set_mode(update.current_mode_id)
            self.chat.view.render([state.mode_var(), self.meter()])
        elif isinstance(update, ConfigOptionUpdate):
            state.config_options = list(update.config_options)
            self.chat.view.render([state.options_var(), self.meter()])
        elif isinstance(update, SessionInfoUpdate):
            if update.title:
                self.chat.title = update.title
                self.chat.save()
        elif isinstance(update, UsageUpdate):
            state.used, state.size = update.used, update.size
            state.cost = update.cost.amount if update.cost else state.cost
            self.chat.view.render([self.meter()])

    def meter(self) -> Meter:
        """The meter: the agent's mode and model, its context use and cost."""
        state = self.state
        return Meter(
            text=state.meter_text(),
            tokens=state.used or 0,
            window=state.size,
            cost=state.cost,
        )

    # ----- text ------------------------------------------------------------------------------

    def _chunk(self, update: AgentMessageChunk | AgentThoughtChunk | UserMessageChunk) -> None:
        text = block_text(update.content)
        if self.replay is not None:
            self._replayed(update, text)
        elif isinstance(update, AgentThoughtChunk):
            self._thought(text)
        elif isinstance(update, AgentMessageChunk):
            self._answer_text(text)

    def _thought(self, text: str) -> None:
        if not self._thinking and not self.reasoning:
            self.chat.view.render([transcript.block("### Reasoning\n\n")])
        self._thinking = True
        self.reasoning.append(text)
        self.chat.view.render([transcript.append(text)])

    def _answer_text(self, text: str) -> None:
        if not text:
            return
        self.chat.view.render([Spinner(on=False)])
        if self._thinking:
            self._thinking = False
            self.chat.view.render([transcript.block("### Response\n\n")])
        op = transcript.block if self._separate else transcript.append
        self._separate = False
        self.text.append(text)
        self.chat.view.render([op(text)])

    def _replayed(self, update: Update, text: str) -> None:
        """A loaded session's history: each role's text under its header, and stored."""
        if self.replay == "quiet" or isinstance(update, AgentThoughtChunk):
            return
        role: Literal["user", "llm"] = "user" if isinstance(update, UserMessageChunk) else "llm"
        if role != self._replay_role:
            self.flush_text(self._replay_role or "llm")
            self._replay_role = role
            title = transcript.USER_HEADER if role == "user" else self.state.header()
            self.chat.view.render([Header(role=role, text=title)])
        self.text.append(text)
        self.chat.view.render([transcript.append(text)])

    def replay_role(self) -> Literal["user", "llm"]:
        """Whose text a replayed session was last showing."""
        return self._replay_role or "llm"

    def flush_text(self, role: Literal["user", "llm"] = "llm") -> None:
        """Store the text (and thoughts) so far as one message."""
        text, reasoning = "".join(self.text), "".join(self.reasoning) or None
        self.text, self.reasoning, self._thinking = [], [], False
        if text or reasoning:
            self.chat.add(Message(role=role, content=text, reasoning=reasoning))

    # ----- tool calls ------------------------------------------------------------------------

    def _tool(self, update: ToolCallStart | ToolCallProgress) -> None:
        if self.replay == "quiet":
            return
        call_id = update.tool_call_id
        if call_id not in self.calls:
            self._tool_started(update)
        else:
            title = self._title(update) if update.title or update.kind else None
            status = TOOL_STATUS.get(update.status or "", "running") if update.status else None
            if status or title:
                current = status or "running"
                self.chat.view.render(
                    [
                        ToolStatus(
                            call_id=call_id, status=current, title=title, detail=_where(update)
                        )
                    ]
                )
        if update.status in RESULT:
            self._tool_ended(update)

    def announce(self, call: ToolCallUpdate) -> None:
        """A call first met in a permission question (Qwen Code asks before it announces a
        call): drawn and stored as announced, so its updates and result land on it."""
        if call.tool_call_id not in self.calls and self.replay != "quiet":
            self._tool_started(call)

    def _tool_started(self, update: ToolCallStart | ToolCallUpdate) -> None:
        """The call's line, and the call stored (its result comes when it ends)."""
        self.flush_text()
        raw = update.raw_input
        arguments = raw if isinstance(raw, dict) else {} if raw is None else {"input": raw}
        call = ToolCall(update.tool_call_id, update.kind or "other", dict(arguments))
        self.calls[call.id] = call
        self.titles[call.id] = update.title or ""
        self.chat.add(Message(role="llm", visible=False, tool_calls=[call]))
        status = TOOL_STATUS.get(update.status or "pending", "pending")
        self.chat.view.render(
            [Tool(call_id=call.id, title=self._title(update), status=status, detail=_where(update))]
        )
        self._separate = True

    def _title(self, update: ToolCallStart | ToolCallUpdate) -> str:
        kind = update.kind or self.calls.get(update.tool_call_id, ToolCall("", "other", {})).name
        return f"`{kind}` {update.title or ''}".rstrip()

    def _tool_ended(self, update: ToolCallStart | ToolCallProgress) -> None:
        call = self.calls.get(update.tool_call_id)
        if call is None or self.chat.messages.tool_result(call.id) is not None:
            return
        text = self.content_text(update) or _raw(update.raw_output)
        status = RESULT[update.status or "completed"]
        self.chat.record_tool_result(call, ToolResult(status, text or f"({update.status})"))
        self._separate = True

    def known(self, call_id: str) -> tuple[ToolCall, str] | None:
        """A call the agent announced, and its title."""
        call = self.calls.get(call_id)
        return None if call is None else (call, self.titles.get(call_id, ""))

    def content_text(self, update: ToolCallStart | ToolCallProgress | ToolCallUpdate) -> str:
        """A call's content as text: text as it is, diffs as unified diffs, a terminal's output."""
        parts: list[str] = []
        for item in update.content or []:
            if isinstance(item, ContentToolCallContent):
                parts.append(block_text(item.content))
            elif isinstance(item, FileEditToolCallContent):
                parts.append(diff_text(item.path, item.old_text, item.new_text))
            elif isinstance(item, TerminalToolCallContent):
                parts.append(self._terminal_text(item.terminal_id))
        return "\n".join(part for part in parts if part)

    def answer_pending(self, why: str) -> None:
        """Give each call the agent left open one result (its turn ended without it)."""
        for call in self.chat.messages.pending_calls():
            if call.id in self.calls:
                self.chat.record_tool_result(call, ToolResult("cancelled", why))
                self.chat.view.render([ToolStatus(call_id=call.id, status="cancelled")])

    # ----- plans -----------------------------------------------------------------------------

    def _plan_content(self, update: AgentPlanContentUpdate) -> None:
        plan = update.plan
        if isinstance(plan, PlanUpdateItems):
            self._plan(plan.plan_id, plan.entries)
        else:  # a plan written as a file or as Markdown: shown as it is
            text = getattr(plan, "content", None) or getattr(plan, "path", "")
            self._plan(getattr(plan, "plan_id", "plan"), [], str(text))

    def _plan(self, plan_id: str, entries: list[PlanEntry], text: str | None = None) -> None:
        """The checklist, drawn once per turn and then rewritten in place; kept in the chat."""
        if self.replay == "quiet":
            return
        lines = plan_lines(entries) if text is None else ["**Plan**", *text.splitlines()]
        key = f"{self.turn}:{plan_id}"
        message = self._plans.get(key)
        if message is None and lines:
            self.flush_text()
            message = self.chat.add(Message(role="llm", content="", extra={"acp_plan": plan_id}))
            self._plans[key] = message
            self._separate = True
        if message is not None:
            message.content = "\n".join(lines)
            self.chat.save()
        self.chat.view.render([Plan(plan_id=key, lines=lines)])


def plan_lines(entries: list[PlanEntry]) -> list[str]:
    """A plan as Markdown checklist lines (`[~]` in progress; high priority marked `!`)."""
    if not entries:
        return []
    rows = ["**Plan**"]
    for entry in entries:
        urgent = " (!)" if entry.priority == "high" else ""
        content = " ".join(entry.content.split())
        rows.append(f"- {PLAN_MARK.get(entry.status, '[ ]')} {content}{urgent}")
    return rows


def diff_text(path: str, old: str | None, new: str) -> str:
    """A proposed edit as a unified diff in a fenced block."""
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    body = "".join(
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(before, after, f"a/{path}", f"b/{path}")
    )
    return f"```diff\n{body}```" if body else f"(no change to {path})"


def _where(update: ToolCallStart | ToolCallUpdate) -> str | None:
    locations = update.locations or []
    if not locations:
        return None
    shown = [f"{loc.path}:{loc.line}" if loc.line is not None else loc.path for loc in locations]
    more = f" (+{len(shown) - 3})" if len(shown) > 3 else ""
    return ", ".join(shown[:3]) + more


def _raw(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
