"""The host application: Lua's notifications and requests, dispatched to chats."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..chat.chat import Chat
from ..context.sources import ContextItem, read_items
from ..messages import MessageStore
from ..render_ops import Event, Notice, RenderOp, SetVar
from ..tools.runtime.approval_policy import ApprovalMemory, describe, restorable
from ..tools.runtime.groupwatch import group_watch
from ..workspace import HostOptions, Workspace
from .approver import NvimApprover
from .bridge import Bridge
from .editor import NvimEditor
from .logsetup import mask_secrets
from .pickers import pick_adapter, pick_restore, pick_rules, pick_skills
from .preload import preload
from .view import NvimChatView

if TYPE_CHECKING:  # checkpoints load with the first chat that keeps them
    from ..acp.settings import AgentSettings
    from ..checkpoints import ChatCheckpoints

log = logging.getLogger("codecompanion.nvim")


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


class App:
    """One per host: owns the workspace and the open chats, keyed by chat id."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.workspace: Workspace | None = None
        self.chats: dict[str, Chat] = {}
        self.approver = NvimApprover(bridge, self._flush_view)
        self.editor = NvimEditor(bridge, self._flush_view)
        self._questions: set[asyncio.Task[None]] = set()  # restored approvals being confirmed
        self._preloaded = False  # a chat offered a tool: a first round's modules were loaded

    # ----- entry points (called in pynvim's greenlets) ---------------------------------

    def on_notification(self, method: str, args: dict[str, Any]) -> None:
        """Dispatch one notification from Lua on the core's loop, in arrival order."""
        handler = getattr(self, f"do_{method}", None)
        if handler is None:
            log.warning("unknown notification %r", method)
            return
        if method == "hello":  # configure now: a request may follow before the loop turns
            self._handle(method, handler, args or {})
            return
        # Handlers run as callbacks of the running loop: messages that arrive while the host
        # starts are handled before the loop runs, where the core could not create its tasks.
        self.bridge.loop.call_soon(self._handle, method, handler, args or {})

    def _handle(self, method: str, handler: Any, args: dict[str, Any]) -> None:
        try:
            handler(args)
        except Exception as exc:  # a raising handler must not wedge the host
            log.exception("notification %s failed", method)
            self.bridge.echo_error(f"{method}: {exc} (see :CodeCompanionLog)")

    def handle_request(self, method: str, args: dict[str, Any]) -> object:
        """Answer one request from Lua; errors become an `{error = …}` value, never an exception."""
        handler = getattr(self, f"ask_{method}", None)
        if handler is None:
            return {"error": f"unknown request {method}"}
        try:
            return handler(args or {})
        except Exception as exc:
            log.exception("request %s failed", method)
            return {"error": str(exc)}

    # ----- notifications ---------------------------------------------------------------

    def do_request(self, args: dict[str, Any]) -> None:
        """A question from Lua answered by `host.reply(rid, value)` (Lua waits with a timeout);
        an answer that needs the disk comes from a task."""
        value = self.handle_request(str(args.get("method")), args.get("args") or {})
        rid = int(args.get("rid", 0))
        if inspect.isawaitable(value):
            self.bridge.spawn(self._reply_later(rid, value))
            return
        self.bridge.notify_lua("codecompanion.host", "reply", rid, value)

    async def _reply_later(self, rid: int, value: Awaitable[Any]) -> None:
        try:
            result = await value
        except Exception as exc:
            log.exception("request failed")
            result = {"error": str(exc)}
        self.bridge.notify_lua("codecompanion.host", "reply", rid, result)

    def do_hello(self, args: dict[str, Any]) -> None:
        options = HostOptions.from_lua(args.get("options") or {})
        self.editor.following = (args.get("options") or {}).get("follow") is True
        self.workspace = Workspace(options)
        self._hook(self.workspace)
        if self.workspace.config.error:
            self.bridge.echo_error(f"config file broken: {self.workspace.config.error}")
        self.bridge.spawn(self.workspace.warm_up())
        group_watch().start()
        self._push_completion()

    def _push_completion(self) -> None:
        """Lua completes from a cache: fill it now, so typing never waits on the host."""
        from .completion import completion_payload

        payload = completion_payload(self._workspace())
        self.bridge.notify_lua(
            "codecompanion.complete", "set_items", payload["items"], payload["meta"]
        )

    def _workspace(self) -> Workspace:
        if self.workspace is None:
            self.workspace = Workspace(HostOptions())
            self._hook(self.workspace)
        return self.workspace

    def _offered(self, *tools: str) -> None:
        """A chat offers `tools`: what a first tool round loads, loaded (once) while the
        request that offers them waits on the model (nvim/preload.py)."""
        if not self._preloaded:
            self._preloaded = True
            self.bridge.spawn(preload())

    def _events(self, view: NvimChatView) -> LuaEvents:
        """The chat's event sink, which also tells the host which tools the chat offers."""
        return LuaEvents(view, self._offered)

    def _hook(self, workspace: Workspace) -> None:
        """The workspace's one-line notices (an MCP server restarted) go to Neovim; the log
        masks every secret its adapters use."""
        mask_secrets(workspace.keys.known)
        workspace.notify = lambda line: self.bridge.notice(Notice(text=line, level="warn"))

    def do_chat_new(self, args: dict[str, Any]) -> None:
        """Open a chat: a new one, one restored from disk, or one reattached after a restart."""
        chat_id = str(args["id"])
        saved, messages, damaged = (
            self._saved(chat_id) if args.get("restore") else (None, None, None)
        )
        chat, notice = self._new_chat(args, saved or {}, messages)
        if damaged:
            chat.view.notify(damaged, "error")
        if saved:
            self._restore(chat, saved, bool(args.get("reattach")))
            moved = self._moved_root(args, saved)
            if moved:
                chat.view.notify(moved, "warn")
        elif chat.adapter.name == "demo":
            self._start_demo(chat)
        old = self.chats.pop(chat_id, None)
        if old is not None:  # the buffer was reopened with the same id: the new chat replaces it
            old.stop()
        self.chats[chat_id] = chat
        if notice:
            chat.view.notify(notice, "warn")
        self._announce(chat, bool(saved), bool(args.get("reattach")))

    def _start_demo(self, chat: Chat) -> None:
        """Offer the demo's tools and say what to type (the demo loads only for a demo chat)."""
        from ..loopback.demo import DEMO_TOOLS, intro_ops

        for name in DEMO_TOOLS:
            chat.tools.add_tool(name)
        rules = chat.context.rules
        chat.view.render(intro_ops(chat.tools.cwd, rules.root if rules is not None else None))

    def _flush_view(self, chat_id: str) -> None:
        """Draw what chat `chat_id` has queued (before a question about it is asked)."""
        chat = self.chats.get(chat_id)
        if chat is not None and isinstance(chat.view, NvimChatView):
            chat.view.flush()

    def _saved(self, chat_id: str) -> tuple[dict[str, Any] | None, MessageStore | None, str | None]:
        """A saved chat and its messages (read once, here), or the one line saying why it
        cannot be read."""
        return self._workspace().store.restore(chat_id)

    def _new_chat(
        self, args: dict[str, Any], saved: dict[str, Any], messages: MessageStore | None
    ) -> tuple[Chat, str | None]:
        """The chat for a buffer, with the adapter and model asked for (or saved); and a notice."""
        workspace = self._workspace()
        adapter_name = args.get("adapter") or saved.get("adapter")
        agent = (
            workspace.external_agents().get(adapter_name) if isinstance(adapter_name, str) else None
        )
        if agent is not None:
            return self._agent_chat(args, saved, messages, agent), None
        model = args.get("model") or saved.get("model")
        adapter, notice = workspace.make_adapter(
            adapter_name if isinstance(adapter_name, str) else None,
            model if isinstance(model, str) else None,
        )
        view = NvimChatView(self.bridge, int(args["bufnr"]))
        # A restored chat keeps its project root (confinement and approvals belong to it);
        # a new demo chat works in a temporary folder, never in the user's project.
        here = Path(str(args.get("cwd") or ".")).resolve()
        cwd = project = self._root(args, saved) or here
        if adapter.name == "demo" and not saved:  # its rules files are still the project's
            from ..loopback.demo import demo_project  # with its loopback server: only for the demo

            cwd = demo_project()
        chat = workspace.chat(
            str(args["id"]),
            adapter,
            view,
            self._events(view),
            approver=self.approver,
            cwd=cwd,
            editor=self.editor,
            yolo=bool(args.get("yolo")),
            messages=messages,
        )
        checkpoints = workspace.checkpoints()
        if checkpoints is not None:
            from ..checkpoints import ChatCheckpoints
            from .rewind import NvimRewindAsker

            chat.checkpoints = ChatCheckpoints(chat, checkpoints, NvimRewindAsker(self.bridge))
        self._keep_context(chat, project)
        return chat, notice

    def _agent_chat(
        self,
        args: dict[str, Any],
        saved: dict[str, Any],
        messages: MessageStore | None,
        agent: AgentSettings,
    ) -> Chat:
        """A chat an external agent drives; a restored one (or `session`) loads its session."""
        workspace = self._workspace()
        view = NvimChatView(self.bridge, int(args["bufnr"]))
        here = Path(str(args.get("cwd") or ".")).resolve()
        driven = saved.get("driver")
        kept = driven.get("session_id") if isinstance(driven, dict) else None
        session = args.get("session") or kept
        chat = workspace.agent_chat(
            str(args["id"]),
            agent,
            view,
            self._events(view),
            approver=self.approver,
            cwd=self._root(args, saved) or here,
            editor=self.editor,
            yolo=bool(args.get("yolo")),
            messages=messages,
            session_id=session if isinstance(session, str) and session else None,
        )
        checkpoints = workspace.checkpoints()
        if checkpoints is not None:
            from ..checkpoints import ChatCheckpoints
            from .rewind import NvimRewindAsker

            chat.checkpoints = ChatCheckpoints(chat, checkpoints, NvimRewindAsker(self.bridge))
        if isinstance(args.get("session"), str) and args["session"] and not saved:
            from .agents import agent_of

            driver = agent_of(chat)
            if driver is not None:  # an agent's earlier session: shown as it loads
                self.bridge.spawn(driver.resume())
        return chat

    @staticmethod
    def _root(args: dict[str, Any], saved: dict[str, Any]) -> Path | None:
        """The saved project root, when the chat may keep it: reattached after a host restart,
        or restored in the folder where it was saved. Otherwise the current folder is the root
        (a saved file naming `/tmp` must not make `/tmp` count as inside the project)."""
        root = saved.get("cwd")
        if not isinstance(root, str) or not root:
            return None
        here = Path(str(args.get("cwd") or ".")).resolve()
        if args.get("reattach") or Path(root).resolve() == here:
            return Path(root).resolve()
        return None

    def _moved_root(self, args: dict[str, Any], saved: dict[str, Any]) -> str | None:
        root = saved.get("cwd")
        if not isinstance(root, str) or not root or self._root(args, saved) is not None:
            return None
        here = Path(str(args.get("cwd") or ".")).resolve()
        return (
            f"this chat was saved in {root}; its tools work in {here}, the current folder "
            f"(:cd {root} and restore it there to work in it)"
        )

    def _keep_context(self, chat: Chat, project: Path) -> None:
        """The chat's rules files (those of `project`: a demo chat's tools work elsewhere),
        budget options and summariser, from the config file."""
        from ..budget.keeper import ContextKeeper
        from ..budget.manager import Budget, BudgetOptions
        from ..context.rules import Rules, RulesOptions

        workspace = self._workspace()
        opts = workspace.config.opts or {}
        options = BudgetOptions.from_opts(opts.get("context"))
        summariser = None
        if options.compact_adapter and options.compact_adapter != chat.adapter.name:
            summariser, notice = workspace.make_adapter(options.compact_adapter)
            if notice:
                chat.view.notify(f"compact_adapter: {notice}", "warn")
        rules = Rules(
            project,
            RulesOptions.from_opts(opts.get("rules")),
            deny_read=workspace.permissions().deny_read,
            secrets=chat.secrets,
        )
        budget = Budget(options, workspace.server_windows)
        chat.context = ContextKeeper(chat, budget, rules, summariser)

    def _restore(self, chat: Chat, saved: dict[str, Any], reattached: bool) -> None:
        """Give a chat its saved title and offered tools; remembered approvals and YOLO only
        once the user has seen them and said yes (a chat reattached after a host restart,
        whose approvals were given in this Neovim, keeps them)."""
        chat.title = saved.get("title")
        if isinstance(saved.get("updated"), str):
            chat.updated = saved["updated"]
        state = dict(saved.get("tools") or {})
        remembered = ApprovalMemory.from_state(state.pop("approvals", None))
        yolo = bool(state.pop("yolo", False)) and not chat.tools.yolo
        chat.tools.restore_state(state)
        chat.context.restore_state(saved.get("context"))
        registry = chat.tools.registry

        def opts(name: str) -> dict[str, Any] | None:
            entry = registry.get(name)
            return entry.tool.opts if entry is not None else None

        kept, refused = restorable(remembered, opts)
        if refused:
            names = ", ".join(refused)
            chat.view.notify(f"saved tool-wide approvals dropped: {names}", "warn")
        if reattached:
            self._grant(chat, kept, yolo)
        elif kept.tools or kept.commands or yolo:
            task = self.bridge.loop.create_task(self._confirm_restored(chat, kept, yolo))
            self._questions.add(task)
            task.add_done_callback(self._questions.discard)

    async def _confirm_restored(self, chat: Chat, kept: ApprovalMemory, yolo: bool) -> None:
        """Ask before a restored chat gets back its approvals and YOLO mode."""
        lines = describe(kept) + (["YOLO mode (every call runs without a question)"] * yolo)
        question = "Restore what this saved chat approved? " + "; ".join(lines)
        try:
            keep = await self.approver.confirm(chat.id, question)
        except Exception:
            log.exception("chat %s: asking about restored approvals failed", chat.id)
            keep = False
        if not keep:
            chat.view.notify("the saved chat's approvals were not restored", "info")
            return
        self._grant(chat, kept, yolo)

    @staticmethod
    def _grant(chat: Chat, kept: ApprovalMemory, yolo: bool) -> None:
        for name in kept.tools:
            chat.tools.approvals.tools.add(name)
        chat.tools.approvals.commands |= kept.commands
        if yolo:
            chat.tools.yolo = True
            chat.view.render([SetVar(name="codecompanion_yolo", value=True)])
            chat.view.notify("this chat was in YOLO mode and still is (gty turns it off)", "warn")

    def _announce(self, chat: Chat, restored: bool, reattached: bool) -> None:
        """Draw a restored chat (a reattached buffer still shows it) and fire the events."""
        if reattached:
            chat.view.notify("host restarted: chat restored from disk", "warn")
        elif restored:
            from ..chat.transcript import replay

            chat.view.render(replay(chat.messages, chat.adapter.name, chat.model))
            chat.fire("ChatRestored")
        chat.view.render(_mode_vars(chat, probe=False))
        self.bridge.spawn(_show_sandbox(chat))  # probing starts a process: off the open path
        self.bridge.spawn(chat.context.opened())  # the meter from the start
        if chat.tools.offered:  # a restored or demo chat: its first round may come soon
            self._offered(*chat.tools.offered)
        chat.fire("ChatCreated")
        chat.fire("ChatOpened")
        if chat.checkpoints is not None and restored:
            self.bridge.spawn(chat.checkpoints.push())

    def _chat(self, args: dict[str, Any]) -> Chat | None:
        chat = self.chats.get(str(args.get("id")))
        if chat is None:
            self.bridge.echo_error("this chat is not attached to the host: open a new chat")
        return chat

    def do_chat_submit(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None:
            context = read_items(args.get("context"))
            text = str(args.get("text") or "")
            if any(item.source for item in context):  # files: vetted (maybe asked) first
                self.bridge.spawn(self._submit_vetted(chat, text, context))
            elif not chat.submit(text, context):
                chat.view.render([])  # nothing queued; the buffer stays as it is

    async def _submit_vetted(self, chat: Chat, text: str, context: list[ContextItem]) -> None:
        """Send the message once the files its context names are vetted (context/file_items.py):
        a secret is left out, a file outside the project only if the user allows it."""
        from ..context.file_items import vet

        deny = self._workspace().permissions().deny_read
        kept, notes = await vet(context, chat.tools.cwd, chat.tools.confirm, deny)
        for line in notes:
            chat.view.notify(line, "warn")
        if not chat.submit(text, kept):
            chat.view.render([])

    def do_slash_fetch(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None:
            self.bridge.spawn(
                self._slash_fetch(chat, args.get("bufnr"), str(args.get("url") or ""))
            )

    async def _slash_fetch(self, chat: Chat, bufnr: int | None, url: str) -> None:
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

    def do_chat_stop(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None and not chat.stop() and not args.get("quiet"):
            chat.view.notify("nothing is running", "info")

    def do_chat_close(self, args: dict[str, Any]) -> None:
        chat = self.chats.pop(str(args.get("id")), None)
        if chat is not None:
            chat.stop()
            chat.save_now()
            if chat.checkpoints is not None:
                chat.checkpoints.close()
            if chat.tools.sandbox is not None:
                chat.tools.sandbox.close()
            self.bridge.spawn(chat.adapter.aclose())

    def do_chat_opened(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None:
            chat.fire("ChatOpened")

    def do_chat_clear(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is None:
            return
        new_id = args.get("new_id")
        then = self._demo_again(chat) if chat.adapter.name == "demo" else None
        if isinstance(new_id, str) and new_id and new_id not in self.chats:
            # Lua already sends under the new id; the old saved chat is left as it was.
            self.chats[new_id] = self.chats.pop(chat.id)
            chat.clear(new_id, then=then)
        else:
            chat.clear(then=then)

    def _demo_again(self, chat: Chat) -> Callable[[], None]:
        """After a demo chat is cleared: a fresh folder, the demo's tools and its intro again."""

        def again() -> None:
            from ..loopback.demo import demo_project

            view = chat.view
            assert isinstance(view, NvimChatView)  # every chat of the host draws in Neovim
            self._workspace().retool(
                chat,
                approver=self.approver,
                events=self._events(view),
                cwd=demo_project(),
                editor=self.editor,
            )
            self._start_demo(chat)

        return again

    def do_chat_regenerate(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None:
            chat.regenerate()

    def do_chat_yolo(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is not None:
            chat.tools.yolo = not chat.tools.yolo
            state = (
                "on: tools run without asking (except excluded ones)" if chat.tools.yolo else "off"
            )
            chat.view.notify(f"YOLO mode {state}", "warn" if chat.tools.yolo else "info")
            chat.view.render(_mode_vars(chat))

    def do_chat_forget_approvals(self, args: dict[str, Any]) -> None:
        """Forget the chat's "always" approvals and turn YOLO off (`gtx`)."""
        chat = self._chat(args)
        if chat is None:
            return
        yolo = chat.tools.yolo
        count = chat.tools.forget_approvals()
        chat.save()
        chat.show_approvals()
        what = f"{count} remembered approval{'s' if count != 1 else ''} forgotten"
        chat.view.notify(what + ("; YOLO mode off" if yolo else ""), "info")
        chat.view.render(_mode_vars(chat))

    def do_chat_mode(self, args: dict[str, Any]) -> None:
        """Switch the chat's permission mode (`mode`: a name, or "next" to cycle)."""
        from ..sandbox.settings import MODES

        chat = self._chat(args)
        if chat is None:
            return
        wanted = str(args.get("mode") or "next")
        if wanted == "next":
            wanted = MODES[(MODES.index(chat.tools.mode) + 1) % len(MODES)]
        if wanted not in MODES:
            chat.view.notify(f"unknown mode {wanted!r}: use {', '.join(MODES)}", "error")
            return
        chat.tools.mode = wanted
        chat.view.notify(_mode_line(chat), "warn" if wanted == "yolo" else "info")
        chat.view.render(_mode_vars(chat))

    def do_chat_pick_adapter(self, args: dict[str, Any]) -> None:
        chat = self._idle_chat(args)
        if chat is not None:
            self.bridge.spawn(
                pick_adapter(
                    self.bridge,
                    self._workspace(),
                    chat,
                    lambda name: self._set_adapter({"id": chat.id, "adapter": name}),
                    lambda model: self._set_model({"id": chat.id, "model": model}),
                )
            )

    def _idle_chat(self, args: dict[str, Any]) -> Chat | None:
        """The chat, unless a request or its tools run (then one line says so)."""
        chat = self._chat(args)
        if chat is not None and chat.busy:
            chat.view.notify("a request is running: stop it (q) before changing adapter or model")
            return None
        return chat

    def _set_adapter(self, args: dict[str, Any]) -> None:
        chat = self._idle_chat(args)
        if chat is None:
            return
        adapter, notice = self._workspace().make_adapter(str(args.get("adapter")))
        if notice:
            chat.view.notify(notice, "warn")
        self.bridge.spawn(chat.adapter.aclose())
        chat.adapter = adapter
        chat.save()
        chat.view.notify(f"adapter: {adapter.name} · {chat.model}")
        chat.fire("ChatAdapter")

    def _set_model(self, args: dict[str, Any]) -> None:
        chat = self._idle_chat(args)
        if chat is not None:
            chat.adapter.settings.model = str(args.get("model"))
            chat.save()
            chat.view.notify(f"model: {chat.model}")
            chat.fire("ChatModel")

    def do_chat_compact(self, args: dict[str, Any]) -> None:
        """`/compact`: summarise the earlier conversation now."""
        chat = self._chat(args)
        if chat is not None:
            chat.compact()

    def do_chat_rules(self, args: dict[str, Any]) -> None:
        """`/rules`: pick a rules file to turn off (or back on) for this chat."""
        chat = self._chat(args)
        if chat is not None:
            self.bridge.spawn(pick_rules(self.bridge, chat))

    def do_chat_skills(self, args: dict[str, Any]) -> None:
        """`/skills`: pick a skill to turn off (or back on) for this chat."""
        chat = self._chat(args)
        if chat is not None:
            self.bridge.spawn(pick_skills(self.bridge, chat))

    def do_chat_full_output(self, args: dict[str, Any]) -> None:
        chat = self._chat(args)
        if chat is None:
            return
        call_id = args.get("call_id")
        text = chat.full_output(call_id if isinstance(call_id, str) else None)
        if text is None:
            chat.view.notify("no tool output here: put the cursor on a tool's line or output")
            return
        self.bridge.notify_lua("codecompanion.editor", "scratch", "tool-output", text.split("\n"))

    def _checkpoints(self, args: dict[str, Any]) -> ChatCheckpoints | None:
        chat = self._chat(args)
        if chat is not None and chat.checkpoints is None:
            chat.view.notify("checkpoints are turned off (opts.checkpoints.enabled)", "warn")
        return chat.checkpoints if chat is not None else None

    def do_chat_pick_rewind(self, args: dict[str, Any]) -> None:
        session = self._checkpoints(args)
        if session is not None:
            from .rewind import pick_rewind

            self.bridge.spawn(pick_rewind(self.bridge, session))

    def do_chat_rewind(self, args: dict[str, Any]) -> None:
        session = self._checkpoints(args)
        if session is not None:
            code, conversation = args.get("code", True), args.get("conversation", True)
            self.bridge.spawn(
                session.rewind(
                    int(args.get("turn") or 1), code is not False, conversation is not False
                )
            )

    def do_chat_rewind_undo(self, args: dict[str, Any]) -> None:
        session = self._checkpoints(args)
        if session is not None:
            self.bridge.spawn(session.undo())

    def do_chat_review(self, args: dict[str, Any]) -> None:
        session = self._checkpoints(args)
        if session is not None:
            self.bridge.spawn(self._review(session, _turn(args)))

    async def _review(self, session: ChatCheckpoints, since_turn: int | None) -> None:
        from .rewind import changes_payload

        payload = await changes_payload(session, since_turn)
        self.bridge.notify_lua("codecompanion.checkpoints", "show_review", payload)

    def do_chat_review_revert(self, args: dict[str, Any]) -> None:
        session = self._checkpoints(args)
        if session is None:
            return
        hunk = args.get("hunk")

        async def revert() -> None:
            await session.revert(
                _turn(args), str(args.get("path")), hunk if isinstance(hunk, int) else None
            )
            await self._review(session, _turn(args))

        self.bridge.spawn(revert())

    def ask_changes(self, args: dict[str, Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        session = self._checkpoints(args)
        if session is None:
            return {"error": "no checkpoints for this chat"}
        from .rewind import changes_payload

        return changes_payload(session, _turn(args))

    def do_pick_agent_session(self, args: dict[str, Any]) -> None:
        """`:CodeCompanionChat Resume`: an agent's earlier session, picked and loaded."""
        from .agents import pick_agent_session

        name = args.get("adapter")
        last = self.chats.get(str(args.get("id")))
        if not isinstance(name, str) or not name:
            name = last.adapter.name if last is not None else None
        if not name or name not in self._workspace().external_agents():
            self.bridge.echo_error(
                "Resume: name an agent (adapter=NAME) or use it from an agent chat"
            )
            return
        cwd = Path(str(args.get("cwd") or ".")).resolve()
        self.bridge.spawn(pick_agent_session(self.bridge, self._workspace(), name, cwd))

    def do_chat_agent_mode(self, args: dict[str, Any]) -> None:
        """The agent's mode, picked in Lua from `b:codecompanion_acp_mode`."""
        from .agents import set_agent_mode

        chat = self._chat(args)
        if chat is not None:
            self.bridge.spawn(set_agent_mode(chat, str(args.get("mode") or "")))

    def do_chat_agent_option(self, args: dict[str, Any]) -> None:
        """One of the agent's config options, picked in Lua from `b:codecompanion_acp_options`."""
        from .agents import set_agent_option

        chat = self._chat(args)
        value = args.get("value")
        if chat is not None and isinstance(value, (str, bool)):
            self.bridge.spawn(set_agent_option(chat, str(args.get("option") or ""), value))

    def do_pick_restore(self, args: dict[str, Any]) -> None:
        self.bridge.spawn(pick_restore(self.bridge, self._workspace()))

    def do_follow(self, args: dict[str, Any]) -> None:
        """Follow mode turned on or off (`:CodeCompanionChat Follow`)."""
        self.editor.following = args.get("on") is True

    def do_buffers(self, args: dict[str, Any]) -> None:
        paths = args.get("paths")
        self.editor.set_loaded(paths if isinstance(paths, list) else [])

    def do_file_saved(self, args: dict[str, Any]) -> None:
        """Neovim wrote a file: the user's change, should a tool round be running."""
        path, size, sec, nsec = (args.get(key) for key in ("path", "size", "sec", "nsec"))
        if not isinstance(path, str) or not isinstance(size, int):
            return
        if not isinstance(sec, int) or not isinstance(nsec, int):
            return
        checkpoints = self._workspace().checkpoints()
        if checkpoints is not None:
            checkpoints.activity.saved(path, ("f", size, sec * 1_000_000_000 + nsec))

    def do_checks(self, args: dict[str, Any]) -> None:
        """`:CodeCompanionChat Checks`: list the project's after-edit checks and ask about them."""
        from .checks import show_checks

        cwd = Path(str(args.get("cwd") or os.getcwd())).resolve()
        checks = self._workspace().project_checks(cwd)
        last = [
            run
            for chat in self.chats.values()
            if chat.tools.checks is not None and chat.tools.checks.root == checks.root
            for run in chat.tools.checks.last
        ]
        self.bridge.spawn(show_checks(self.bridge, self.approver, checks, last))

    def do_approval_reply(self, args: dict[str, Any]) -> None:
        self.bridge.reply(int(args.get("rid", 0)), args)

    def do_editor_reply(self, args: dict[str, Any]) -> None:
        self.bridge.reply(int(args.get("rid", 0)), args.get("value"))

    def do_reload(self, args: dict[str, Any]) -> None:
        workspace = self._workspace()
        error = workspace.reload()
        self._push_completion()
        if error:
            self.bridge.echo_error(f"config file broken: {error}")
            return
        message = "config reloaded" + workspace.reload_chats(self.chats.values(), self.bridge.spawn)
        opts = workspace.config.opts or {}
        for chat in self.chats.values():  # thresholds and rules lists; the counts stay
            chat.context.configure(opts.get("context"), opts.get("rules"))
        self.bridge.notice(Notice(text=message))

    # ----- requests --------------------------------------------------------------------

    def ask_completion_items(self, args: dict[str, Any]) -> dict[str, Any]:
        from .completion import completion_payload

        return completion_payload(self._workspace())

    def ask_health(self, args: dict[str, Any]) -> dict[str, Any]:
        from .health import report

        cwd = args.get("cwd")
        return report(self._workspace(), Path(cwd) if isinstance(cwd, str) and cwd else None)

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
            chat.stop()
            chat.save_now()
            if chat.checkpoints is not None:
                chat.checkpoints.close()  # turns not captured yet are recorded before it ends
        if drain is not None:
            drain()
        self._close_agents()
        for chat in self.chats.values():
            if chat.tools.sandbox is not None:
                chat.tools.sandbox.close()
        if self.workspace is not None:
            self.workspace.close(self.bridge.loop)


def _turn(args: dict[str, Any]) -> int | None:
    value = args.get("since_turn")
    return value if isinstance(value, int) and value > 0 else None


_MODE_WORDS = {
    "ask": "every command and edit is asked",
    "edits": "file edits without asking; commands ask",
    "sandboxed": "edits and sandboxed commands without asking; leaving the sandbox asks",
    "yolo": "no questions (commands still sandboxed)",
}


def _mode_line(chat: Chat) -> str:
    """One line: the mode, what it means, and what confines commands."""
    sandbox = chat.tools.sandbox
    where = sandbox.describe() if sandbox is not None else "unconfined"
    return f"mode {chat.tools.mode}: {_MODE_WORDS[chat.tools.mode]}; commands: {where}"


async def _show_sandbox(chat: Chat) -> None:
    """Probe the sandbox (once per host, without blocking the loop), show its kind in the
    chat's variables and start the chat's waiting launcher for its first command."""
    sandbox = chat.tools.sandbox
    if sandbox is not None:
        await sandbox.probe()
        sandbox.prepare()
        if sandbox.active and sandbox.narrowed is not None:
            line = f"commands may not write this folder: {sandbox.narrowed} (only their temp)"
            chat.view.notify(line, "warn")
    chat.view.render(_mode_vars(chat))


def _mode_vars(chat: Chat, probe: bool = True) -> list[RenderOp]:
    """The buffer variables status() and the statusline read: mode, whether it is YOLO, and
    sandbox kind (left out until probed when `probe` is False)."""
    mode: list[RenderOp] = [
        SetVar(name="codecompanion_mode", value=chat.tools.mode),
        SetVar(name="codecompanion_yolo", value=chat.tools.yolo),
    ]
    sandbox = chat.tools.sandbox
    if sandbox is not None and not probe and not sandbox.probed:
        return mode
    kind = sandbox.kind if sandbox is not None else "none"
    narrowed = sandbox.narrowed if sandbox is not None and sandbox.active else None
    return [
        *mode,
        SetVar(name="codecompanion_sandbox", value=kind),
        SetVar(name="codecompanion_narrowed", value=narrowed or ""),
    ]
