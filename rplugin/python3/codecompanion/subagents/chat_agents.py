"""One chat's subagents: the system prompt's list of them, and running one for the `agent` tool.

A run builds a fresh session (its own messages and context window, the definition's prompt,
adapter and model), a tool system offering only the definition's tools in a mode no wider than
the parent's (its approvals asked in the parent's buffer, its "always" answers shared with
it), and turns it with the model loop until it answers. The parent gets that answer, capped:
one result for the call, whatever happened. Concurrent runs are capped; a subagent that may
write runs alone, between a capture of the project before and after it (the parent's
checkpoints), so its edits are rewound with the parent's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import ToolError
from ..messages import MessageStore
from ..tools.runtime.protocol import cap_output
from .definitions import TOOL, AgentDefinition, Definitions, discover
from .session import SubagentSession, SubagentView

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter
    from ..budget.keeper import ContextKeeper
    from ..checkpoints import ChatCheckpoints
    from ..context.sources import ContextItem
    from ..messages import Message
    from ..ports import ChatView
    from ..tools.runtime.system import ToolSystem

TAG = "subagents"
PREAMBLE = (
    "You are a subagent: another assistant gave you one task in the user's project. Do it with "
    "the tools you are given: call them to read and search, never guess what a file says. When "
    "you are done, answer with what you found; that answer is all the other assistant sees."
)
INTRO = (
    f"Subagents: helpers with their own fresh context and tools. Call the `{TOOL}` tool with a "
    "subagent's name and a complete task (they see nothing of this conversation) to have it "
    "read, search or work on its own; you get only its final answer, so your context stays "
    "small. Prefer one for reading several or long files. The subagents:"
)


@dataclass(frozen=True)
class AgentOptions:
    """`opts["agents"]`: how many run at once, and how much of an answer the parent gets."""

    enabled: bool = True
    max_concurrent: int = 2
    max_result: int = 4000  # characters

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any] | None) -> AgentOptions:
        """The options from a checked `opts["agents"]`."""
        opts = opts or {}
        base = cls()
        return cls(
            enabled=bool(opts.get("enabled", base.enabled)),
            max_concurrent=int(opts.get("max_concurrent", base.max_concurrent)),
            max_result=int(opts.get("max_result", base.max_result)),
        )


@dataclass(frozen=True)
class AgentReply:
    """The one result of an `agent` call: the answer for the model, a line for the user."""

    for_llm: str
    for_user: str


class Parent(Protocol):
    """The chat whose `agent` call runs a subagent."""

    id: str
    adapter: ChatAdapter
    view: ChatView
    tools: ToolSystem
    checkpoints: ChatCheckpoints | None
    secrets: set[str]  # every secret the host knows (adapters/secret_mask.py)

    @property
    def model(self) -> str | None:
        """The chat's model."""
        ...


class Driver(Protocol):
    """What turns a subagent's session (chat/driver.py's TurnDriver)."""

    def message(self, text: str, context: list[ContextItem]) -> Message | None:
        """The task as the model reads it."""
        ...

    async def turn(self) -> Literal["success", "error", "cancelled"]:
        """Work until the model answers."""
        ...

    def cancel(self) -> None:
        """Stop its running tools."""
        ...


class Builders(Protocol):
    """What running a subagent needs from the composition root (the workspace)."""

    def adapter(self, name: str, model: str | None) -> tuple[ChatAdapter, str | None]:
        """An adapter (and a notice when it fell back to another)."""
        ...

    def tools(self, session: SubagentSession, definition: AgentDefinition) -> ToolSystem:
        """The subagent's tool system: its tools, the parent's mode at most."""
        ...

    def context(self, session: SubagentSession) -> ContextKeeper:
        """The subagent's context keeper (its own window and budget)."""
        ...

    def driver(self, session: SubagentSession) -> Driver:
        """The model loop that turns it."""
        ...


class ChatAgents:
    """The subagents a chat can run."""

    def __init__(
        self,
        parent: Parent,
        root: Path,
        configured: Callable[[], Mapping[str, Any]],
        options: AgentOptions,
        build: Builders,
    ) -> None:
        self.parent = parent
        self.root = root
        self.configured = configured
        self.options = options
        self.build = build
        self._slots = asyncio.Semaphore(max(1, options.max_concurrent))
        self._writing = asyncio.Lock()

    def definitions(self) -> Definitions:
        """Every subagent defined now (read again each time: a new file shows at once)."""
        return discover(self.root, self.configured())

    def sync(self, messages: MessageStore, offered: list[str]) -> bool:
        """List the subagents in the system prompt while the `agent` tool is offered; True when
        the user defined some (then the tool is offered)."""
        if not self.options.enabled:
            messages.remove_where(TAG)
            return False
        found = self.definitions()
        user_defined = any(agent.source != "builtin" for agent in found.agents)
        if TOOL not in offered and not user_defined:
            messages.remove_where(TAG)
            return False
        text = "\n".join([INTRO, *(agent.line() for agent in found.agents)])
        if not any(m.tag == TAG and m.content == text for m in messages):
            position = sum(1 for m in messages if m.role == "system")
            messages.insert_system(text, TAG, position)
        return user_defined

    async def run(self, name: str | None, task: str, call_id: str) -> AgentReply:
        """Run subagent `name` (None: `general`) on `task`; its answer, or a ToolError."""
        if not self.options.enabled:
            raise ToolError("Subagents are turned off in this chat (opts.agents.enabled).")
        found = self.definitions()
        definition = found.get(name or "general")
        if definition is None:
            listed = ", ".join(f"`{a.name}`" for a in found.agents)
            raise ToolError(f"There is no subagent called `{name}`. The subagents: {listed}.")
        async with self._slots:
            return await self._run(definition, task, call_id)

    async def _run(self, definition: AgentDefinition, task: str, call_id: str) -> AgentReply:
        parent = self.parent
        same = (definition.adapter or parent.adapter.name) == parent.adapter.name
        model = definition.model or (parent.model if same else None)
        adapter, notice = self.build.adapter(definition.adapter or parent.adapter.name, model)
        if notice:
            parent.view.notify(f"subagent {definition.name}: {notice}", "warn")
        view = SubagentView(parent.view, call_id, definition.name)
        prompt = f"{PREAMBLE}\n\n{definition.prompt}"
        session = SubagentSession(parent.id, adapter, view, prompt)
        session.secrets = parent.secrets
        session.tools = self.build.tools(session, definition)
        session.context = self.build.context(session)
        try:
            answer = await self._turn(session, task)
        finally:
            await adapter.aclose()
        text, _cut = cap_output(answer, self.options.max_result)
        # Folded under the call in the chat: what the subagent did, then its answer.
        shown = f"{view.summary()}:\n{view.calls_text()}\n\nIts answer:\n{text}"
        return AgentReply(shown, f"{view.summary()} (zo shows them and its answer)")

    async def _turn(self, session: SubagentSession, task: str) -> str:
        """The subagent's one turn; a writing one alone, captured before and after."""
        driver = self.build.driver(session)
        message = driver.message(task, [])
        if message is None:
            raise ToolError("The task could not be given to the subagent.")
        session.add(message)
        writes = not all(
            entry is not None and entry.opts.get("read_only")
            for entry in map(session.tools.offered_entry, session.tools.offered)
        )
        checkpoints = self.parent.checkpoints if writes else None
        async with self._writing if writes else contextlib.nullcontext():
            if checkpoints is not None:
                await checkpoints.before_tools()
                # What its file tools write is the chat's change, told as the parent's are.
                session.tools.reporter.watch = self.parent.tools.reporter.watch
            try:
                status = await driver.turn()
            except asyncio.CancelledError:
                driver.cancel()  # its running tools stop with the parent's call
                raise
            finally:
                if checkpoints is not None:
                    checkpoints.after_tools()
        answer = session.answer()
        if status != "success" or not answer:
            raise ToolError(f"The subagent ended without an answer ({status}).")
        return answer


def agents_of(tools: object) -> ChatAgents | None:
    """The chat's subagents, from its tool system (None: none)."""
    agents = getattr(tools, "agents", None)
    return agents if isinstance(agents, ChatAgents) else None
