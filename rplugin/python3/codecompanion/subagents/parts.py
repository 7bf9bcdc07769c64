"""The parts a subagent run is built from, as the workspace makes them for a chat: its
adapter, its tool system (the definition's tools, the parent's mode at most, the parent's
sandbox, approver and remembered approvals), its context keeper and its model loop."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..hooks.table import TOOL_EVENTS
from ..sandbox.settings import MODES, Mode
from .asking import Asking
from .definitions import TOOL, AgentDefinition
from .session import NoEvents, SubagentSession

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter
    from ..budget.keeper import ContextKeeper
    from ..budget.windows import ServerWindows
    from ..chat.chat import Chat
    from ..chat.model_loop import ModelLoop
    from ..config import Config
    from ..ports import Approver, Editor, EventSink
    from ..sandbox.commands import CommandSandbox
    from ..tools.runtime.protocol import ChatForTools
    from ..tools.runtime.system import ToolSystem


class Shop(Protocol):
    """What the parts are made from: the host's workspace."""

    config: Config
    server_windows: ServerWindows

    def make_adapter(
        self, name: str | None, model: str | None = None
    ) -> tuple[ChatAdapter, str | None]:
        """An adapter, and a notice when it fell back to the demo."""
        ...

    def tool_system(
        self,
        chat: ChatForTools,
        *,
        approver: Approver,
        events: EventSink,
        cwd: Path,
        editor: Editor | None = None,
        yolo: bool = False,
        overrides: Mapping[str, Any] | None = None,
        sandbox: CommandSandbox | None = None,
    ) -> ToolSystem:
        """A tool system for `chat`."""
        ...


def narrower(parent: Mode, wanted: Mode | None) -> Mode:
    """The mode a subagent runs in: the one it asks for, never wider than its parent's."""
    if wanted is None:
        return parent
    return min(parent, wanted, key=MODES.index)


class SubagentParts:
    """Builds a chat's subagent runs (subagents/chat_agents.py's Builders)."""

    def __init__(
        self, workspace: Shop, parent: Chat, approver: Approver, editor: Editor | None
    ) -> None:
        self.workspace = workspace
        self.parent = parent
        self.approver = approver
        self.editor = editor

    def adapter(self, name: str, model: str | None) -> tuple[ChatAdapter, str | None]:
        """The adapter the definition names (or the parent's), with its model."""
        return self.workspace.make_adapter(name, model)

    def tools(self, session: SubagentSession, definition: AgentDefinition) -> ToolSystem:
        """Only the definition's tools, in the parent's mode at most; what the parent's user
        approved for always stays approved here, and the other way round."""
        parent = self.parent.tools
        system = self.workspace.tool_system(
            session,
            approver=Asking(self.approver, definition.name),
            events=NoEvents(),
            cwd=parent.cwd,
            editor=self.editor,
            overrides={"default_tools": []},
            sandbox=parent.sandbox,
        )
        system.mode = narrower(parent.mode, definition.mode)
        system.approvals = parent.approvals
        if "skill" not in definition.tools:
            system.skills = None
        if system.hooks is not None:
            system.hooks = system.hooks.only(TOOL_EVENTS)
            system.hooks.say = parent.hooks.say if parent.hooks is not None else system.hooks.say
        missing = [n for n in definition.tools if n == TOOL or not system.add_tool(n)]
        if missing:
            names = ", ".join(missing)
            self.parent.view.notify(f"subagent {definition.name}: no tool {names} here", "warn")
        return system

    def context(self, session: SubagentSession) -> ContextKeeper:
        """Its own budget in its own model's window (the config's `opts["context"]`)."""
        from ..budget.keeper import ContextKeeper
        from ..budget.manager import Budget, BudgetOptions

        opts = self.workspace.config.opts or {}
        budget = Budget(BudgetOptions.from_opts(opts.get("context")), self.workspace.server_windows)
        return ContextKeeper(session, budget)

    def driver(self, session: SubagentSession) -> ModelLoop:
        """The same model loop a chat turns with."""
        from ..chat.model_loop import ModelLoop

        return ModelLoop(session)
