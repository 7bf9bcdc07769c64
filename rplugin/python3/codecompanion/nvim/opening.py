"""Opening a chat for a Neovim buffer: a new one, one restored from disk, or one reattached
after a host restart; the demo chat's tools and intro."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..chat import controls
from ..chat.chat import Chat
from ..messages import MessageStore
from ..render_ops import Event
from ..workspace import Workspace
from .approver import NvimApprover
from .bridge import Bridge
from .editor import NvimEditor
from .messages import ChatNew
from .preload import preload
from .view import NvimChatView

if TYPE_CHECKING:  # checkpoints and agents load with the first chat that has them
    from ..acp.settings import AgentSettings
    from ..checkpoints import RewindAsker


class LuaEvents:
    """EventSink for tool events: fired in Lua through the chat's render batch."""

    def __init__(self, view: NvimChatView, offered: Callable[[str], None] = lambda _: None) -> None:
        self.view = view
        self.offered = offered  # told each tool the chat offers (ChatToolAdded)

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Queue `User CodeCompanion<name>` in order with the chat's renders."""
        if name == "ChatToolAdded" and isinstance(data.get("tool"), str):
            self.offered(data["tool"])
        self.view.render([Event(name=name, data=data)])


class Opener:
    """Builds the chats of one host's buffers through the workspace, the composition root."""

    def __init__(self, bridge: Bridge, approver: NvimApprover, editor: NvimEditor) -> None:
        self.bridge = bridge
        self.approver = approver
        self.editor = editor
        self._questions: set[asyncio.Task[None]] = set()  # restored approvals being confirmed
        self._preloaded = False  # a chat offered a tool: a first round's modules were loaded

    def offered(self, *tools: str) -> None:
        """A chat offers `tools`: what a first tool round loads, loaded (once) while the
        request that offers them waits on the model (nvim/preload.py)."""
        if not self._preloaded:
            self._preloaded = True
            self.bridge.spawn(preload())

    def _events(self, view: NvimChatView) -> LuaEvents:
        """The chat's event sink, which also tells the host which tools the chat offers."""
        return LuaEvents(view, self.offered)

    def open(self, workspace: Workspace, asked: ChatNew, adopt: Callable[[Chat], None]) -> None:
        """The chat for a buffer (`chat_new`), restored when asked, given to `adopt` (the
        host's open chats) and announced to Lua."""
        saved, messages, damaged = (
            workspace.store.restore(asked.id) if asked.restore else (None, None, None)
        )
        saved = saved or {}
        chat, notice = self._new_chat(workspace, asked, saved, messages)
        if damaged:
            chat.view.notify(damaged, "error")
        if saved:
            self._restore(chat, saved, asked.reattach)
            moved = controls.moved_root(_here(asked), saved.get("cwd"), asked.reattach)
            if moved:
                chat.view.notify(moved, "warn")
        elif chat.adapter.name == "demo":
            start_demo(chat)
        adopt(chat)
        if notice:
            chat.view.notify(notice, "warn")
        self._announce(chat, bool(saved), asked.reattach)

    def _rewinds(self, workspace: Workspace) -> RewindAsker | None:
        """How a rewind asks, when the chat keeps checkpoints (they load only then)."""
        if workspace.checkpoints() is None:
            return None
        from .rewind import NvimRewindAsker

        return NvimRewindAsker(self.bridge)

    def _new_chat(
        self,
        workspace: Workspace,
        asked: ChatNew,
        saved: dict[str, Any],
        messages: MessageStore | None,
    ) -> tuple[Chat, str | None]:
        """The chat for a buffer, with the adapter and model asked for (or saved); a notice."""
        adapter_name = asked.adapter or saved.get("adapter")
        agents = workspace.external_agents()
        agent = agents.get(adapter_name) if isinstance(adapter_name, str) else None
        if agent is not None:
            return self._agent_chat(workspace, asked, saved, messages, agent), None
        model = asked.model or saved.get("model")
        adapter, notice = workspace.make_adapter(
            adapter_name if isinstance(adapter_name, str) else None,
            model if isinstance(model, str) else None,
        )
        view = NvimChatView(self.bridge, asked.bufnr)
        # A restored chat keeps its project root (confinement and approvals belong to it);
        # a new demo chat works in a temporary folder, never in the user's project.
        here = _here(asked)
        project = controls.kept_root(here, saved.get("cwd"), asked.reattach) or here
        cwd = project
        if adapter.name == "demo" and not saved:  # its rules files are still the project's
            from ..loopback.demo import demo_project  # with its loopback server: only the demo

            cwd = demo_project()
        chat = workspace.chat(
            asked.id,
            adapter,
            view,
            self._events(view),
            approver=self.approver,
            cwd=cwd,
            editor=self.editor,
            yolo=asked.yolo,
            messages=messages,
            rewinds=self._rewinds(workspace),
            project=project,
        )
        return chat, notice

    def _agent_chat(
        self,
        workspace: Workspace,
        asked: ChatNew,
        saved: dict[str, Any],
        messages: MessageStore | None,
        agent: AgentSettings,
    ) -> Chat:
        """A chat an external agent drives; a restored one (or `session`) loads its session."""
        view = NvimChatView(self.bridge, asked.bufnr)
        here = _here(asked)
        driven = saved.get("driver")
        kept = driven.get("session_id") if isinstance(driven, dict) else None
        session = asked.session or kept
        chat = workspace.agent_chat(
            asked.id,
            agent,
            view,
            self._events(view),
            approver=self.approver,
            cwd=controls.kept_root(here, saved.get("cwd"), asked.reattach) or here,
            editor=self.editor,
            yolo=asked.yolo,
            messages=messages,
            session_id=session if isinstance(session, str) and session else None,
            rewinds=self._rewinds(workspace),
        )
        if asked.session and not saved:
            from .agents import agent_of

            driver = agent_of(chat)
            if driver is not None:  # an agent's earlier session: shown as it loads
                self.bridge.spawn(driver.resume())
        return chat

    def _restore(self, chat: Chat, saved: dict[str, Any], reattached: bool) -> None:
        """A restored chat's state; its approvals and YOLO once the user has seen them and
        said yes (a chat reattached after a host restart, whose approvals were given in this
        Neovim, keeps them)."""
        remembered = controls.restore(chat, saved)
        if reattached:
            controls.grant(chat, remembered)
        elif remembered:
            ask = controls.confirm_restored(chat, remembered, self.approver)
            task = self.bridge.loop.create_task(ask)
            self._questions.add(task)
            task.add_done_callback(self._questions.discard)

    def _announce(self, chat: Chat, restored: bool, reattached: bool) -> None:
        """Draw a restored chat (a reattached buffer still shows it) and fire the events."""
        if reattached:
            chat.view.notify("host restarted: chat restored from disk", "warn")
        elif restored:
            from ..chat.transcript import replay

            chat.view.render(replay(chat.messages, chat.adapter.name, chat.model))
            chat.fire("ChatRestored")
        chat.view.render(controls.mode_vars(chat, probe=False))
        self.bridge.spawn(controls.show_sandbox(chat))  # probing starts a process: off the path
        self.bridge.spawn(chat.context.opened())  # the meter from the start
        if chat.tools.offered:  # a restored or demo chat: its first round may come soon
            self.offered(*chat.tools.offered)
        chat.fire("ChatCreated")
        chat.fire("ChatOpened")
        if chat.checkpoints is not None and restored:
            self.bridge.spawn(chat.checkpoints.push())

    def demo_again(self, workspace: Workspace, chat: Chat) -> Callable[[], None]:
        """After a demo chat is cleared: a fresh folder, the demo's tools and its intro again."""

        def again() -> None:
            from ..loopback.demo import demo_project

            view = chat.view
            assert isinstance(view, NvimChatView)  # every chat of the host draws in Neovim
            workspace.retool(
                chat,
                approver=self.approver,
                events=self._events(view),
                cwd=demo_project(),
                editor=self.editor,
            )
            start_demo(chat)

        return again


def _here(asked: ChatNew) -> Path:
    """The folder Neovim was in when it opened the chat."""
    return Path(asked.cwd or ".").resolve()


def start_demo(chat: Chat) -> None:
    """Offer the demo's tools and say what to type (the demo loads only for a demo chat)."""
    from ..loopback.demo import DEMO_TOOLS, intro_ops

    for name in DEMO_TOOLS:
        chat.tools.add_tool(name)
    rules = chat.context.rules
    chat.view.render(intro_ops(chat.tools.cwd, rules.root if rules is not None else None))
