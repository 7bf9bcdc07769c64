"""The host application: Lua's notifications and requests, dispatched to chats.

`NOTIFICATIONS` and `REQUESTS` are the dispatch tables: one entry per message Lua sends, each
a line or two handing the message to where its work lives (`chat/controls.py` for what a
chat's keys change, `opening.py` for opening a chat, `rewind.py`, `pickers.py`, `agents.py`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..chat import controls
from ..chat.chat import Chat
from ..context.sources import read_items
from ..render_ops import Notice
from ..tools.runtime.groupwatch import group_watch
from ..workspace import HostOptions, Workspace
from . import messages as msg
from .approver import NvimApprover
from .bridge import Bridge
from .editor import NvimEditor
from .logsetup import mask_secrets
from .opening import LuaEvents, Opener
from .pickers import pick_adapter, pick_restore, pick_rules, pick_skills
from .view import NvimChatView

if TYPE_CHECKING:  # checkpoints load with the first chat that keeps them
    from ..checkpoints import ChatCheckpoints

__all__ = ["NOTIFICATIONS", "REQUESTS", "App", "LuaEvents"]

log = logging.getLogger("codecompanion.nvim")

Args = Mapping[str, object]  # a message's table as msgpack decoded it, before `msg.decode`


class App:
    """One per host: owns the workspace and the open chats, keyed by chat id."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.workspace: Workspace | None = None
        self.chats: dict[str, Chat] = {}
        self.approver = NvimApprover(bridge, self._flush_view)
        self.editor = NvimEditor(bridge, self._flush_view)
        self.opener = Opener(bridge, self.approver, self.editor)

    # ----- entry points (called in pynvim's greenlets) ---------------------------------

    def on_notification(self, method: str, args: Args) -> None:
        """Dispatch one notification from Lua on the core's loop, in arrival order."""
        handler = NOTIFICATIONS.get(method)
        if handler is None:
            log.warning("unknown notification %r", method)
            return
        if method == "hello":  # configure now: a request may follow before the loop turns
            self._handle(method, handler, args or {})
            return
        # Handlers run as callbacks of the running loop: messages that arrive while the host
        # starts are handled before the loop runs, where the core could not create its tasks.
        self.bridge.loop.call_soon(self._handle, method, handler, args or {})

    def _handle(self, method: str, handler: Handler, args: Args) -> None:
        try:
            handler(self, args)
        except Exception as exc:  # a raising handler must not wedge the host
            log.exception("notification %s failed", method)
            self.bridge.echo_error(f"{method}: {exc} (see :CodeCompanionLog)")

    def handle_request(self, method: str, args: Args) -> object:
        """Answer one request from Lua; errors become an `{error = …}` value, never an exception."""
        handler = REQUESTS.get(method)
        if handler is None:
            return {"error": f"unknown request {method}"}
        try:
            return handler(self, args or {})
        except Exception as exc:
            log.exception("request %s failed", method)
            return {"error": str(exc)}

    def request(self, asked: msg.Request) -> None:
        """A question from Lua answered by `host.reply(rid, value)` (Lua waits with a timeout);
        an answer that needs the disk comes from a task."""
        value, rid = self.handle_request(asked.method, asked.args), asked.rid
        if inspect.isawaitable(value):
            self.bridge.spawn(self._reply_later(rid, value))
            return
        self.bridge.notify_lua("codecompanion.host", "reply", rid, value)

    async def _reply_later(self, rid: int, value: Awaitable[object]) -> None:
        try:
            result = await value
        except Exception as exc:
            log.exception("request failed")
            result = {"error": str(exc)}
        self.bridge.notify_lua("codecompanion.host", "reply", rid, result)

    # ----- the host's state ------------------------------------------------------------

    def hello(self, options: Mapping[str, Any]) -> None:
        """Lua's `setup()` options: the workspace made, what a first exchange loads loaded."""
        self.editor.following = options.get("follow") is True
        self.workspace = Workspace(HostOptions.from_lua(options))
        self._hook(self.workspace)
        if self.workspace.config.error:
            self.bridge.echo_error(f"config file broken: {self.workspace.config.error}")
        self.bridge.spawn(self.workspace.warm_up())
        group_watch().start()
        self.push_completion()

    def push_completion(self) -> None:
        """Lua completes from a cache: fill it now, so typing never waits on the host."""
        from .completion import completion_payload

        payload = completion_payload(self.ws())
        self.bridge.notify_lua(
            "codecompanion.complete", "set_items", payload["items"], payload["meta"]
        )

    def ws(self) -> Workspace:
        """The workspace (one with the defaults if a message came before `hello`)."""
        if self.workspace is None:
            self.workspace = Workspace(HostOptions())
            self._hook(self.workspace)
        return self.workspace

    def _hook(self, workspace: Workspace) -> None:
        """The workspace's one-line notices (an MCP server restarted) go to Neovim; the log
        masks every secret its adapters use."""
        mask_secrets(workspace.keys.known)
        workspace.notify = lambda line: self.bridge.notice(Notice(text=line, level="warn"))

    def _flush_view(self, chat_id: str) -> None:
        """Draw what chat `chat_id` has queued (before a question about it is asked)."""
        chat = self.chats.get(chat_id)
        if chat is not None and isinstance(chat.view, NvimChatView):
            chat.view.flush()

    def reload(self) -> None:
        """`:CodeCompanion reload`: the config file read again and given to the open chats."""
        workspace = self.ws()
        error = workspace.reload()
        self.push_completion()
        if error:
            self.bridge.echo_error(f"config file broken: {error}")
            return
        message = "config reloaded" + workspace.reload_chats(self.chats.values(), self.bridge.spawn)
        opts = workspace.config.opts or {}
        for chat in self.chats.values():  # thresholds and rules lists; the counts stay
            chat.context.configure(opts.get("context"), opts.get("rules"))
        self.bridge.notice(Notice(text=message))

    # ----- the open chats --------------------------------------------------------------

    def chat(self, message: msg.ChatMessage) -> Chat | None:
        """The chat a message names (one line says so when the host has none by that id)."""
        chat = self.chats.get(message.id)
        if chat is None:
            self.bridge.echo_error("this chat is not attached to the host: open a new chat")
        return chat

    def on_chat(self, message: msg.ChatMessage, control: Callable[[Chat], object]) -> None:
        """Apply `control` to the chat the message names; a coroutine it gives is spawned."""
        chat = self.chat(message)
        if chat is not None:
            work = control(chat)
            if inspect.iscoroutine(work):
                self.bridge.spawn(work)

    def adopt(self, chat: Chat) -> None:
        """A chat opened for a buffer; one the buffer had before (reopened, same id) stops."""
        old = self.chats.pop(chat.id, None)
        if old is not None:
            old.stop()
        self.chats[chat.id] = chat

    def close_chat(self, chat_id: str) -> None:
        """The chat's buffer closed: its turn stopped, saved, its sandbox and adapter closed."""
        chat = self.chats.pop(chat_id, None)
        if chat is not None:
            controls.close(chat)
            if chat.tools.sandbox is not None:
                chat.tools.sandbox.close()
            self.bridge.spawn(chat.adapter.aclose())

    def clear(self, chat: Chat, new_id: object) -> None:
        """Clear a chat (a demo chat gets its folder and intro again); under `new_id` when Lua
        gave one (the old saved chat is left as it was)."""
        demo = chat.adapter.name == "demo"
        then = self.opener.demo_again(self.ws(), chat) if demo else None
        if isinstance(new_id, str) and new_id and new_id not in self.chats:
            self.chats[new_id] = self.chats.pop(chat.id)
            chat.clear(new_id, then=then)
        else:
            chat.clear(then=then)

    def submit(self, chat: Chat, sent: msg.ChatSubmit) -> object:
        """`<CR>` under `## Me`: the message sent (once the files it names are vetted)."""
        text, context = sent.text, read_items(sent.context)
        if controls.submit(chat, text, context):
            return None
        return controls.submit_vetted(chat, text, context, self.ws().permissions().deny_read)

    def pick_adapter(self, chat: Chat) -> object:
        """Pick an adapter, then one of its models, for an idle chat."""
        if not controls.idle(chat):
            return None
        return pick_adapter(
            self.bridge,
            self.ws(),
            chat,
            lambda name: self._switch_adapter(chat, name),
            lambda model: controls.switch_model(chat, model),
        )

    def _switch_adapter(self, chat: Chat, name: str) -> None:
        old = controls.switch_adapter(chat, *self.ws().make_adapter(name))
        if old is not None:
            self.bridge.spawn(old.aclose())

    def show_full_output(self, chat: Chat, call_id: object) -> None:
        """A tool's whole output in a scratch buffer (`gf` on its line)."""
        text = chat.full_output(call_id if isinstance(call_id, str) else None)
        if text is None:
            chat.view.notify("no tool output here: put the cursor on a tool's line or output")
            return
        self.bridge.notify_lua("codecompanion.editor", "scratch", "tool-output", text.split("\n"))

    async def slash_fetch(self, chat: Chat, bufnr: object, url: str) -> None:
        """`/fetch`: the page joins the chat's next message, or one line says why not."""
        from ..context.web import fetch_context
        from ..errors import ToolError

        chat.view.notify(f"/fetch: fetching {url}", "info")
        try:
            item = await fetch_context(chat.tools, url)
        except ToolError as exc:
            chat.view.notify(f"/fetch: {exc}", "error")
            return
        self.bridge.notify_lua("codecompanion.context", "add", bufnr, item.to_lua())

    # ----- checkpoints, checks, files ----------------------------------------------------

    def checkpoints(self, message: msg.ChatMessage) -> ChatCheckpoints | None:
        """The named chat's checkpoints (one line says when they are off)."""
        chat = self.chat(message)
        if chat is not None and chat.checkpoints is None:
            chat.view.notify("checkpoints are turned off (opts.checkpoints.enabled)", "warn")
        return chat.checkpoints if chat is not None else None

    def on_checkpoints(
        self,
        message: msg.ChatMessage,
        then: Callable[[ChatCheckpoints], Coroutine[object, object, object]],
    ) -> None:
        """Run `then` on the named chat's checkpoints, as a task."""
        session = self.checkpoints(message)
        if session is not None:
            self.bridge.spawn(then(session))

    def file_saved(self, saved: msg.FileSaved) -> None:
        """Neovim wrote a file: the user's change, should a tool round be running."""
        checkpoints = self.ws().checkpoints()
        if checkpoints is not None:
            stamp = ("f", saved.size, saved.sec * 1_000_000_000 + saved.nsec)
            checkpoints.activity.saved(saved.path, stamp)

    def checks(self, cwd: str | None) -> None:
        """`:CodeCompanionChat Checks`: list the project's after-edit checks and ask about them."""
        from .checks import show_checks

        checks = self.ws().project_checks(Path(cwd or os.getcwd()).resolve())
        last = [
            run
            for chat in self.chats.values()
            if chat.tools.checks is not None and chat.tools.checks.root == checks.root
            for run in chat.tools.checks.last
        ]
        self.bridge.spawn(show_checks(self.bridge, self.approver, checks, last))

    def pick_agent_session(self, asked: msg.PickAgentSession) -> None:
        """`:CodeCompanionChat Resume`: an agent's earlier session, picked and loaded."""
        from .agents import pick_agent_session

        last = self.chats.get(asked.id or "")
        name = asked.adapter or (last.adapter.name if last is not None else None)
        if not name or name not in self.ws().external_agents():
            self.bridge.echo_error(
                "Resume: name an agent (adapter=NAME) or use it from an agent chat"
            )
            return
        cwd = Path(asked.cwd or ".").resolve()
        self.bridge.spawn(pick_agent_session(self.bridge, self.ws(), name, cwd))

    # ----- exit --------------------------------------------------------------------------

    def _close_agents(self) -> None:
        """End the agents of open chats (and their commands) before the host goes."""
        if "codecompanion.nvim.agents" not in sys.modules:
            return  # no chat had an agent: no SDK to load while Neovim waits to kill the host
        from .agents import agent_of

        closing = [d.close() for d in map(agent_of, self.chats.values()) if d is not None]
        loop = self.bridge.loop
        if not closing or loop.is_closed() or loop.is_running():
            for work in closing:
                work.close()
            return

        async def close_all() -> None:
            await asyncio.gather(*closing)

        try:
            loop.run_until_complete(asyncio.wait_for(close_all(), 10))
        except Exception:
            log.exception("stopping the agents failed")

    def close(self, drain: Callable[[], None] | None = None) -> None:
        """Stop every chat (Neovim is exiting); `drain` lets their tasks end before the
        workspace (MCP servers, the checkpoint worker) closes under them."""
        for chat in self.chats.values():
            controls.close(chat)
        if drain is not None:
            drain()
        self._close_agents()
        for chat in self.chats.values():
            if chat.tools.sandbox is not None:
                chat.tools.sandbox.close()
        if self.workspace is not None:
            self.workspace.close(self.bridge.loop)


def _since(turn: int | None) -> int | None:
    return turn if turn is not None and turn > 0 else None


async def _pick_rewind(app: App, session: ChatCheckpoints) -> None:
    from .rewind import pick_rewind

    await pick_rewind(app.bridge, session)


async def _review(app: App, session: ChatCheckpoints, since_turn: int | None) -> None:
    from .rewind import show_review

    await show_review(app.bridge, session, _since(since_turn))


async def _revert(app: App, session: ChatCheckpoints, asked: msg.ChatReviewRevert) -> None:
    from .rewind import revert

    await revert(app.bridge, session, _since(asked.since_turn), asked.path, asked.hunk)


def _changes(app: App, asked: msg.Changes) -> object:
    from .rewind import changes_payload

    session = app.checkpoints(asked)
    if session is None:
        return {"error": "no checkpoints for this chat"}
    return changes_payload(session, _since(asked.since_turn))


async def _agent_mode(chat: Chat, mode: str) -> None:
    from .agents import set_agent_mode

    await set_agent_mode(chat, mode)


async def _agent_option(chat: Chat, option: str, value: str | bool | None) -> None:
    from .agents import set_agent_option

    if value is not None:
        await set_agent_option(chat, option, value)


def _health(app: App, asked: msg.Health) -> object:
    from .health import report

    return report(app.ws(), Path(asked.cwd) if asked.cwd else None)


def _completion_items(app: App) -> object:
    from .completion import completion_payload

    return completion_payload(app.ws())


M = TypeVar("M", bound=msg.Message)


class Handler(Protocol):
    """An entry of a dispatch table: the message's name, and its handling of Lua's table."""

    @property
    def name(self) -> str:
        """The message's name, as Lua sends it."""
        ...

    def __call__(self, app: App, args: Args) -> object:
        """Decode the message and handle it; what a request answers."""
        ...


@dataclass(frozen=True)
class On(Generic[M]):
    """Message `message` (decoded once, here) goes to `handler`."""

    message: type[M]
    handler: Callable[[App, M], object]

    @property
    def name(self) -> str:
        """The message's name, as Lua sends it."""
        return self.message.NAME

    def __call__(self, app: App, args: Args) -> object:
        """Decode the message and hand it over; what the handler returns."""
        return self.handler(app, msg.decode(self.message, args))


def _table(*entries: Handler) -> Mapping[str, Handler]:
    return MappingProxyType({entry.name: entry for entry in entries})


NOTIFICATIONS = _table(
    On(msg.Hello, lambda app, m: app.hello(m.options)),
    On(msg.Request, App.request),
    On(msg.Reload, lambda app, m: app.reload()),
    On(msg.ChatNew, lambda app, m: app.opener.open(app.ws(), m, app.adopt)),
    On(msg.ChatOpened, lambda app, m: app.on_chat(m, lambda c: c.fire("ChatOpened"))),
    On(msg.ChatClose, lambda app, m: app.close_chat(m.id)),
    On(msg.ChatClear, lambda app, m: app.on_chat(m, lambda c: app.clear(c, m.new_id))),
    On(msg.ChatSubmit, lambda app, m: app.on_chat(m, lambda c: app.submit(c, m))),
    On(msg.ChatRegenerate, lambda app, m: app.on_chat(m, Chat.regenerate)),
    On(msg.ChatCompact, lambda app, m: app.on_chat(m, Chat.compact)),
    On(msg.ChatStop, lambda app, m: app.on_chat(m, lambda c: controls.stop(c, m.quiet))),
    On(msg.ChatYolo, lambda app, m: app.on_chat(m, controls.toggle_yolo)),
    On(msg.ChatForgetApprovals, lambda app, m: app.on_chat(m, controls.forget_approvals)),
    On(msg.ChatMode, lambda app, m: app.on_chat(m, lambda c: controls.switch_mode(c, m.mode))),
    On(msg.ChatPickAdapter, lambda app, m: app.on_chat(m, app.pick_adapter)),
    On(msg.ChatRules, lambda app, m: app.on_chat(m, lambda c: pick_rules(app.bridge, c))),
    On(msg.ChatSkills, lambda app, m: app.on_chat(m, lambda c: pick_skills(app.bridge, c))),
    On(
        msg.ChatFullOutput,
        lambda app, m: app.on_chat(m, lambda c: app.show_full_output(c, m.call_id)),
    ),
    On(msg.SlashFetch, lambda app, m: app.on_chat(m, lambda c: app.slash_fetch(c, m.bufnr, m.url))),
    On(msg.ChatAgentMode, lambda app, m: app.on_chat(m, lambda c: _agent_mode(c, m.mode))),
    On(
        msg.ChatAgentOption,
        lambda app, m: app.on_chat(m, lambda c: _agent_option(c, m.option, m.value)),
    ),
    On(msg.PickAgentSession, App.pick_agent_session),
    On(msg.PickRestore, lambda app, m: app.bridge.spawn(pick_restore(app.bridge, app.ws()))),
    On(msg.ChatPickRewind, lambda app, m: app.on_checkpoints(m, lambda s: _pick_rewind(app, s))),
    On(
        msg.ChatRewind,
        lambda app, m: app.on_checkpoints(m, lambda s: s.rewind(m.turn, m.code, m.conversation)),
    ),
    On(msg.ChatRewindUndo, lambda app, m: app.on_checkpoints(m, lambda s: s.undo())),
    On(
        msg.ChatReview,
        lambda app, m: app.on_checkpoints(m, lambda s: _review(app, s, m.since_turn)),
    ),
    On(msg.ChatReviewRevert, lambda app, m: app.on_checkpoints(m, lambda s: _revert(app, s, m))),
    On(msg.Follow, lambda app, m: setattr(app.editor, "following", m.on)),
    On(msg.Buffers, lambda app, m: app.editor.set_loaded(list(m.paths), m.servers)),
    On(msg.FileSaved, App.file_saved),
    On(msg.Checks, lambda app, m: app.checks(m.cwd)),
    On(msg.ApprovalReply, lambda app, m: app.bridge.reply(m.rid, m.answer())),
    On(msg.EditorReply, lambda app, m: app.bridge.reply(m.rid, m.value)),
)

REQUESTS = _table(
    On(msg.CompletionItems, lambda app, m: _completion_items(app)),
    On(msg.Health, _health),
    On(msg.Changes, _changes),
)
