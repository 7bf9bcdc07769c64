"""The host's shared state and the one place chats are built: the user's config, the tool
registry, adapters, saved chats, and a chat with its tool system, approvals, checkpoints, context
keeper and the environment its tool processes get. Neovim (nvim/opening.py), the command line
(cli/tool.py) and the tests build chats and tool systems here."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .adapters.base import AdapterSettings, ChatAdapter
from .budget.windows import ServerWindows
from .config import Config, load_config
from .errors import ConfigError
from .persistence.history import ChatStore
from .sandbox.settings import Permissions, read_permissions

if TYPE_CHECKING:
    from .acp.driver import AgentDriver
    from .acp.settings import AgentSettings
    from .after_edit.runs import ProjectChecks
    from .chat.chat import Chat
    from .chat.driver import TurnDriver
    from .checkpoints import Checkpoints, RewindAsker
    from .hooks import ChatHooks, HookTable
    from .mcp import McpManager
    from .messages import MessageStore
    from .ports import Approver, ChatView, Editor, EventSink
    from .sandbox.commands import CommandSandbox
    from .sandbox.probe import Detector
    from .sandbox.reserve import Reserve
    from .sandbox.user_places import UserPlaces
    from .skills import ChatSkills
    from .subagents import ChatAgents
    from .tools.model.registry import ToolRegistry
    from .tools.runtime.protocol import ChatForTools
    from .tools.runtime.system import ToolSystem
    from .transport.tls import TlsTrust

log = logging.getLogger("codecompanion.workspace")

NO_PROVIDER = (
    "offline demo: no provider is configured (set OPENAI_API_KEY, ANTHROPIC_API_KEY or "
    "GEMINI_API_KEY, start Ollama, or name an adapter in codecompanion.py)"
)


@dataclass
class HostOptions:
    """What Lua's setup() passes to the host once at start."""

    config_file: str | None = None
    adapter: str | None = None
    model: str | None = None
    yolo: bool = False
    permissions: dict[str, Any] = field(default_factory=dict)  # setup({permissions = ...})
    data_dir: str = field(
        default_factory=lambda: str(Path.home() / ".local/share/nvim/codecompanion")
    )
    config_dir: str | None = None  # stdpath("config"); None: from $XDG_CONFIG_HOME, as Neovim

    @classmethod
    def from_lua(cls, data: Mapping[str, Any]) -> HostOptions:
        """Read the options table, ignoring unknown keys and Lua nils."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value else None

        permissions = data.get("permissions")
        return cls(
            config_file=text("config_file"),
            adapter=text("adapter"),
            model=text("model"),
            yolo=bool(data.get("yolo")),
            permissions=dict(permissions) if isinstance(permissions, dict) else {},
            data_dir=text("data_dir") or cls().data_dir,
            config_dir=text("config_dir"),
        )


class Workspace:
    """Config, tools and adapters shared by every chat of one host."""

    def __init__(
        self,
        options: HostOptions,
        env: Mapping[str, str] | None = None,
        *,
        config: Config | None = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        """`config` and `registry` stand in for the config file's and the tools it names (tests
        build their chats here with their own); by default both come from the config file."""
        self.options = options
        self.env = dict(os.environ if env is None else env)
        self.store = ChatStore(Path(options.data_dir) / "chats")
        self._ollama: bool | None = None
        self.config: Config = load_config(options.config_file) if config is None else config
        from .adapters import KeyResolver

        self.keys = KeyResolver()
        self._remember_secrets()
        self.mcp: McpManager | None = None
        from .adapters import ADAPTERS
        from .plugins import load_plugins

        self.plugins = load_plugins(ADAPTERS)
        self.config = self._check_adapter(self.config)  # plugins may add adapter names
        # One line for the user (the host points it at Neovim): an MCP server restarted, say.
        self.notify: Callable[[str], None] = lambda line: log.warning("%s", line)
        self.registry = self._make_registry() if registry is None else registry
        self._demo: Any = None
        self._trust: TlsTrust | None = None
        self._checkpoints: Checkpoints | None = None
        self._sandbox: Detector | None = None
        self._reserve: Reserve | None = None  # the next chat's sandbox, made ready
        # What servers said of their models' windows, for every chat of this host.
        self.server_windows = ServerWindows()

    def _remember_secrets(self) -> None:
        """Mask the config's secrets from now on, before any is used (adapters/secret_mask.py)."""
        from .adapters.catalog import remember_config

        remember_config(self.keys, self.config.adapters, self.config.mcp, self.env)

    def permissions(self) -> Permissions:
        """The `permissions` table: the config file's, then setup()'s keys over it."""
        merged = {**self.config.permissions, **self.options.permissions}
        try:
            return read_permissions(merged)
        except ValueError as exc:  # setup()'s keys are checked here (the file's on loading)
            log.error("setup permissions: %s; using the config file's", exc)
            return read_permissions(self.config.permissions)

    def sandbox_detector(self) -> Detector:
        """The host's one probe of which command sandbox works here, shared by its chats: run
        off the event loop as a chat opens, or on the first command."""
        if self._sandbox is None:
            from .sandbox.probe import Detector

            self._sandbox = Detector()
        return self._sandbox

    def command_sandbox(self, project: Path | None = None) -> CommandSandbox:
        """A chat's command sandbox: these settings, the plugin's own files read-only; its
        launchers confine themselves ahead for `project` (the chat's folder) when given."""
        from .sandbox.commands import CommandSandbox

        if self._reserve is None:
            from .sandbox.reserve import Reserve

            self._reserve = Reserve()
        real = Path(os.path.realpath(project)) if project is not None else None
        permissions, places = self.permissions(), self.user_places()
        detector = self.sandbox_detector()
        return CommandSandbox(permissions, detector, (), self._reserve, real, places)

    def user_places(self) -> UserPlaces:
        """The user's configuration, the plugin's folders (made now if missing: a command
        could otherwise make them) and the files the host runs."""
        from .sandbox.user_places import UserPlaces

        plugin = (self.options.data_dir, str(self.store.folder), str(self._log_dir()))
        for folder in plugin:
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                log.warning("cannot make %s: %s", folder, exc)
        host = (*(p for p in (self.config.path,) if p), *self.config.imports)
        host += tuple(self.plugins.files)
        return UserPlaces.find(self.env, self.options.config_dir, plugin, host)

    def ssl_context(self) -> ssl.SSLContext:
        """One TLS context (CAs loaded once) for every adapter and MCP server of this host."""
        return self.trust().context

    def trust(self) -> TlsTrust:
        """The host's TLS context and where its CAs come from (see tls.py)."""
        if self._trust is None:
            from .transport.tls import build_trust

            self._trust = build_trust(self.env)
            log.info("TLS: CAs from %s", self._trust.source)
        return self._trust

    def tls_for(self, settings: AdapterSettings) -> ssl.SSLContext | None:
        """The shared TLS context for a provider over https; None over plain http."""
        from .adapters import PROVIDERS

        builtin = PROVIDERS.get(settings.name)
        plugin = self.plugins.adapters.get(settings.name)
        default = builtin.url if builtin else plugin.default_url if plugin else None
        url = settings.url or default or ""
        return None if url.startswith("http://") else self.ssl_context()

    async def warm_up(self) -> None:
        """Load the CA bundle off the loop before the first chat needs it (only for https)."""
        await asyncio.to_thread(self._warm_up)

    def _warm_up(self) -> None:
        name = self.default_adapter()
        if name is not None and name != "demo":
            self.tls_for(self.settings(name))

    def _make_registry(self) -> ToolRegistry:
        from .tools import tool_registry

        tool_opts = self.config.opts.get("tools", {}) if isinstance(self.config.opts, dict) else {}
        tools = {**self.plugins.tools, **self.config.tools}  # the config file wins
        registry = tool_registry(tools, self.config.groups, tool_opts=tool_opts)
        servers = self.config.mcp.get("servers") or {}
        if servers:
            from .mcp import McpManager
            from .mcp.tools import register_servers

            self.mcp = McpManager(
                servers,
                keys=self.keys,
                log_dir=self._log_dir(),
                ssl_context=self.ssl_context,
            )
            self.mcp.notify = lambda line: self.notify(line)
            register_servers(self.mcp, registry)
        return registry

    def _log_dir(self) -> Path:
        """Beside the host's log file (`$CODECOMPANION_LOG`), else `data_dir/logs`."""
        log_file = self.env.get("CODECOMPANION_LOG")
        return Path(log_file).parent if log_file else Path(self.options.data_dir) / "logs"

    def _check_adapter(self, config: Config) -> Config:
        """The config with an adapter name that exists (else a `file:line` error naming it)."""
        if config.adapter is not None and config.adapter not in self.adapter_names():
            from .config import assignment_lines

            line = assignment_lines(config.path or "").get("adapter", 0)
            problem = (
                f"{config.path}:{line}: adapter {config.adapter!r} does not exist; "
                f"valid names: {', '.join(self.adapter_names())}"
            )
            config.error = problem if config.error is None else f"{problem} (and more)"
            config.adapter = None
        return config

    def reload(self) -> str | None:
        """Re-read the config file and the installed plugins (a package installed since the
        host started is found); returns the config file's one-line error, if any."""
        from .adapters import ADAPTERS
        from .plugins import load_plugins, rescan_site_packages

        rescan_site_packages()
        self.plugins = load_plugins(ADAPTERS)
        self.config = self._check_adapter(load_config(self.options.config_file))
        self.stop_mcp()
        self.registry = self._make_registry()
        from .adapters import KeyResolver

        known = self.keys.known  # every secret seen stays masked (open chats and the log share it)
        self.keys = KeyResolver()  # a fixed `cmd:` key is run again, not read from the cache
        self.keys.known = known
        self._remember_secrets()
        self.server_windows.clear()
        return self.config.error

    def ollama_address(self) -> tuple[str, int]:
        """Where Ollama listens: `$OLLAMA_HOST` (as Ollama reads it), else 127.0.0.1:11434."""
        raw = self.env.get("OLLAMA_HOST", "").strip()
        raw = raw.split("://", 1)[-1].rstrip("/") or "127.0.0.1:11434"
        host, _, port = raw.rpartition(":") if ":" in raw else (raw, ":", "11434")
        return (host or "127.0.0.1"), int(port) if port.isdigit() else 11434

    def ollama_reachable(self) -> bool:
        """Whether Ollama answers a TCP connect (checked once; a local refusal is immediate)."""
        if self._ollama is None:
            try:
                socket.create_connection(self.ollama_address(), timeout=0.2).close()
                self._ollama = True
            except OSError:
                self._ollama = False
        return self._ollama

    def default_adapter(self) -> str | None:
        """setup() option, then the config file, then the first API key found, then Ollama."""
        from .adapters import default_adapter_name

        name = self.options.adapter or self.config.adapter or default_adapter_name(self.env)
        if name is None and self.ollama_reachable():
            name = "ollama"
        return name

    def adapter_names(self) -> list[str]:
        """Every adapter the user can pick."""
        from .adapters import ADAPTERS

        return sorted(set(ADAPTERS) | set(self.plugins.adapters) | {"demo"})

    def settings(self, name: str, model: str | None = None) -> AdapterSettings:
        """The adapter's settings with the user's overrides from the config file."""
        overrides = dict(self.config.adapters.get(name) or {})
        known = set(AdapterSettings.__dataclass_fields__) - {"name", "extra"}
        settings = AdapterSettings(name=name, **{k: v for k, v in overrides.items() if k in known})
        settings.extra.update({k: v for k, v in overrides.items() if k not in known})
        if name == "ollama" and not settings.url and self.env.get("OLLAMA_HOST"):
            host, port = self.ollama_address()
            settings.url = f"http://{host}:{port}"
        if model:
            settings.model = model
        elif self.options.model and name == self.default_adapter():
            settings.model = self.options.model
        return settings

    def reload_chats(self, chats: Iterable[Chat], spawn: Callable[[Any], object]) -> str:
        """Give open chats the reloaded tools, options and adapter settings; what it did, said.

        A busy chat gets the tools now (later calls use them) and its adapter at the next
        reload, since its request is using the current one. `spawn` runs the old adapters'
        closing on the loop.
        """
        opts = self.config.opts.get("tool_system", {}) if self.config.opts else {}
        gone: set[str] = set()
        busy = count = 0
        from .chat.model_loop import ModelLoop

        for chat in chats:
            count += 1
            gone.update(chat.tools.reconfigure(self.registry, opts))
            chat.tools.hooks = self.hooks(chat.tools)  # the reloaded hooks, from the next call
            self._hook_up(chat)
            if not isinstance(chat.driver, ModelLoop):
                continue  # an agent chat: its agent keeps running as it is
            if chat.busy:
                busy += 1
                continue
            adapter, _ = self.make_adapter(chat.adapter.name, chat.model)
            spawn(chat.adapter.aclose())
            chat.adapter = adapter
        if not count:
            return ""
        open_chats = f"{count} open chat" + ("" if count == 1 else "s")
        said = f" for {open_chats}: tools, tool options and adapter settings"
        if busy:
            which = "1 busy chat keeps its" if busy == 1 else f"{busy} busy chats keep their"
            said += f"; {which} adapter until the next reload"
        if gone:
            said += f"; no longer in the config: {', '.join(sorted(gone))}"
        return said

    def make_adapter(
        self, name: str | None, model: str | None = None
    ) -> tuple[ChatAdapter, str | None]:
        """An adapter for a new chat, and a one-line notice when it fell back to the demo."""
        from .adapters import create_adapter

        chosen = name or self.default_adapter()
        broken = f"config file broken: {self.config.error}; " if self.config.error else ""
        if chosen is None or chosen == "demo":
            if broken:  # say why there is no provider: the file that should name it is broken
                return self.demo_adapter(), f"{broken}using the offline demo"
            return self.demo_adapter(), (NO_PROVIDER if chosen is None else None)
        try:
            settings = self.settings(chosen, model)
            adapter = create_adapter(
                settings,
                key_resolver=self.keys,
                ssl_context=self.tls_for(settings),
                extra=self.plugins.adapters,
            )
            return adapter, (f"{broken}using {chosen}" if broken else None)
        except ConfigError as exc:
            return self.demo_adapter(), f"{broken}adapter {chosen}: {exc}; using the offline demo"

    def demo_adapter(self) -> ChatAdapter:
        """The offline demo: an OpenAI-style adapter talking to an in-process loopback server."""
        from .adapters import create_adapter
        from .loopback.demo import start_demo_server

        if self._demo is None:
            self._demo = start_demo_server()
        settings = AdapterSettings(
            name="openai_compatible", url=self._demo.url + "/v1", api_key="demo", model="demo"
        )
        adapter = create_adapter(settings, key_resolver=self.keys, ssl_context=None)
        adapter.name = "demo"
        return adapter

    def tool_opts(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The config's `opts.tool_system` (with `overrides`), its `env` naming every variable
        an adapter reads a key from, so tool processes never get one."""
        configured = self.config.opts.get("tool_system", {}) if self.config.opts else {}
        opts = {**configured, **(overrides or {})}
        opts["env"] = tool_env_opts(opts.get("env"), self.config.adapters, self.config.mcp)
        opts.setdefault("editor", self.config.opts.get("editor", {}))  # after_edit/ reads it
        return opts

    def project_checks(self, cwd: Path) -> ProjectChecks:
        """The checks run after the model's edits in the project at `cwd` (after_edit/)."""
        from .after_edit.runs import ChecksOptions, ProjectChecks
        from .after_edit.trust import TrustStore

        trust = TrustStore(Path(self.options.data_dir) / "checks.json")
        options = ChecksOptions.from_opts(self.config.opts or {})
        return ProjectChecks(Path(cwd).resolve(), self.config.after_edit, trust, options)

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
        checks: bool = True,
    ) -> ToolSystem:
        """A chat's tool system: this host's tools, options, key-free child environment and TLS
        context (the web tools trust exactly what the adapters trust); its own command sandbox
        unless `sandbox` (a subagent's: its parent's) is given; the project's checks after edits
        when it has an editor, unless `checks` is False (the command line's one call)."""
        from .tools.runtime.system import ToolSystem

        sandbox = sandbox or self.command_sandbox(cwd)
        system = ToolSystem(
            chat=chat,
            registry=self.registry,
            approver=approver,
            events=events,
            cwd=cwd,
            editor=editor,
            opts=self.tool_opts(overrides),
            yolo=yolo or self.options.yolo,
            tls=self.ssl_context,
            sandbox=sandbox,
            mode=sandbox.permissions.mode,  # the settings read once (a bad one is said once)
            # Checks after edits are part of the editor's loop: a chat in Neovim runs them.
            checks=(lambda: self.project_checks(cwd)) if checks and editor is not None else None,
        )
        system.skills = self.skills(cwd)
        system.hooks = self.hooks(system)
        return system

    def hook_table(self, cwd: Path) -> HookTable:
        """The hooks of the config file, then (when `opts["hooks"]["claude_settings"]` is
        on) those of Claude Code's settings files in `cwd` and the user's home."""
        from .hooks import HookTable, read_table, settings_table

        table = read_table(self.config.hooks, "hooks") if self.config.hooks else HookTable()
        opts = self.config.opts.get("hooks") if self.config.opts else None
        if isinstance(opts, dict) and opts.get("claude_settings"):
            table = table.merged(settings_table(cwd, Path.home()))
        return table

    def hooks(self, system: ToolSystem) -> ChatHooks | None:
        """A chat's hooks (None: it has none), run in its project, sandbox and environment."""
        opts = self.config.opts.get("hooks") if self.config.opts else None
        if not self.config.hooks and not (isinstance(opts, dict) and opts.get("claude_settings")):
            return None  # the hooks' modules stay unloaded
        from .hooks import ChatHooks
        from .hooks.run import Where

        table = self.hook_table(system.cwd)
        for line in table.problems:
            log.warning("hooks: %s", line)
        if not table.count():
            return None

        def where() -> Where:
            box = system.sandbox
            if box is None:
                return Where(system.cwd, system.environment())
            if not box.active:
                return Where(system.cwd, system.environment(), cap=box.process_cap)
            confine = partial(box.launch, system.cwd)
            return Where(system.cwd, system.environment(), confine, box.process_cap)

        hooks = ChatHooks(table, where, system.chat_id)
        hooks.mode = lambda: system.mode
        return hooks

    def skills(self, cwd: Path) -> ChatSkills:
        """A chat's skills: found in `cwd` and the user's folders, as `opts["skills"]` says."""
        from .skills import ChatSkills, SkillOptions

        opts = self.config.opts.get("skills") if self.config.opts else None
        return ChatSkills(cwd, SkillOptions.from_opts(opts if isinstance(opts, dict) else None))

    def chat(
        self,
        chat_id: str,
        adapter: ChatAdapter,
        view: ChatView,
        events: EventSink,
        *,
        approver: Approver,
        cwd: Path,
        editor: Editor | None = None,
        yolo: bool = False,
        messages: MessageStore | None = None,
        driver: Callable[[Chat], TurnDriver] | None = None,
        rewinds: RewindAsker | None = None,
        project: Path | None = None,
    ) -> Chat:
        """A chat with its tool system, both built here; `driver` produces its turns (the
        model loop unless given: `agent_chat` gives an agent's). With `rewinds` (how a rewind
        asks the user) it keeps checkpoints when they are on; with `project` its context keeper
        reads that project's rules files (a demo chat's tools work elsewhere)."""
        from .chat.chat import Chat
        from .chat.model_loop import ModelLoop

        def tools(chat: Chat) -> ToolSystem:
            return self.tool_system(
                chat, approver=approver, events=events, cwd=cwd, editor=editor, yolo=yolo
            )

        chat = Chat(
            chat_id=chat_id,
            adapter=adapter,
            view=view,
            tool_factory=tools,
            store=self.store,
            messages=messages,
            driver=driver or ModelLoop,
        )
        chat.secrets = self.keys.known  # masked in every tool result and piece of context
        self._hook_up(chat)
        chat.tools.agents = self.agents(chat, approver, editor)
        checkpoints = self.checkpoints() if rewinds is not None else None
        if checkpoints is not None and rewinds is not None:
            from .checkpoints import ChatCheckpoints

            chat.checkpoints = ChatCheckpoints(chat, checkpoints, rewinds)
        if project is not None:
            self._keep_context(chat, project)
        return chat

    def _keep_context(self, chat: Chat, project: Path) -> None:
        """The chat's context keeper: `project`'s rules files, the budget options and the
        summariser, from the config file."""
        from .budget.keeper import ContextKeeper
        from .budget.manager import Budget, BudgetOptions
        from .context.rules import Rules, RulesOptions

        opts = self.config.opts or {}
        options = BudgetOptions.from_opts(opts.get("context"))
        summariser = None
        if options.compact_adapter and options.compact_adapter != chat.adapter.name:
            summariser, notice = self.make_adapter(options.compact_adapter)
            if notice:
                chat.view.notify(f"compact_adapter: {notice}", "warn")
        rules = Rules(
            project,
            RulesOptions.from_opts(opts.get("rules")),
            deny_read=self.permissions().deny_read,
            secrets=chat.secrets,
        )
        chat.context = ContextKeeper(chat, Budget(options, self.server_windows), rules, summariser)

    def retool(
        self,
        chat: Chat,
        *,
        approver: Approver,
        events: EventSink,
        cwd: Path,
        editor: Editor | None = None,
    ) -> None:
        """A chat's tool system made again for `cwd` (a demo chat's fresh folder), with its
        hooks' lines and its subagents as a new chat has them; YOLO stays as it was."""
        yolo = chat.tools.yolo
        chat.tools = self.tool_system(
            chat, approver=approver, events=events, cwd=cwd, editor=editor, yolo=yolo
        )
        self._hook_up(chat)
        chat.tools.agents = self.agents(chat, approver, editor)

    @staticmethod
    def _hook_up(chat: Chat) -> None:
        """The lines of the chat's hooks shown in its buffer."""
        if chat.tools.hooks is not None:
            chat.tools.hooks.say = partial(_say_hook_line, chat.view)

    def agents(self, chat: Chat, approver: Approver, editor: Editor | None) -> ChatAgents:
        """A chat's subagents: its project's and the user's definitions and the config's."""
        from .subagents import AgentOptions, ChatAgents
        from .subagents.parts import SubagentParts

        opts = self.config.opts.get("agents") if self.config.opts else None
        options = AgentOptions.from_opts(opts if isinstance(opts, dict) else None)
        parts = SubagentParts(self, chat, approver, editor)
        return ChatAgents(chat, chat.tools.cwd, lambda: self.config.agents, options, parts)

    def external_agents(self) -> dict[str, AgentSettings]:
        """The external agents a chat can use: the presets and the config file's `acp`."""
        from .acp.settings import agents

        return agents(self.config.acp)

    def agent_chat(
        self,
        chat_id: str,
        agent: AgentSettings,
        view: ChatView,
        events: EventSink,
        *,
        approver: Approver,
        cwd: Path,
        editor: Editor | None = None,
        yolo: bool = False,
        messages: MessageStore | None = None,
        session_id: str | None = None,
        rewinds: RewindAsker | None = None,
    ) -> Chat:
        """A chat whose turns the external agent `agent` produces (its session `session_id`
        loaded again when given); checkpoints as `chat` keeps them."""
        from .acp.adapter import AgentAdapter
        from .acp.driver import AgentDriver, AgentHost

        async def resolve(value: str) -> str:
            if not value.startswith(("env:", "cmd:")):
                return value
            return await self.keys.resolve(value) or ""

        host = AgentHost(self.env, resolve, self._log_dir(), editor, self.config.mcp)
        made: list[AgentDriver] = []

        def driver(chat: Chat) -> AgentDriver:
            made.append(AgentDriver(chat, agent, host, session_id))
            return made[0]

        adapter = AgentAdapter(agent.name, lambda: made[0].state.models(), lambda: made[0].close())
        return self.chat(
            chat_id,
            adapter,
            view,
            events,
            approver=approver,
            cwd=cwd,
            editor=editor,
            yolo=yolo,
            messages=messages,
            driver=driver,
            rewinds=rewinds,
        )

    def stop_mcp(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Stop the MCP servers (the host exits, or the config is reloaded)."""
        if self.mcp is not None:
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            self.mcp.close(loop or running)
            self.mcp = None

    def checkpoints(self) -> Checkpoints | None:
        """The checkpoint store (`data_dir/checkpoints`) with the config's
        `opts["checkpoints"]`; None when they are turned off."""
        from .checkpoints import Checkpoints, Settings

        opts = self.config.opts.get("checkpoints") if self.config.opts else None
        settings = Settings.from_opts(opts if isinstance(opts, dict) else None)
        if not settings.enabled:
            return None
        if self._checkpoints is None:
            self._checkpoints = Checkpoints(Path(self.options.data_dir) / "checkpoints", settings)
        self._checkpoints.settings = settings
        return self._checkpoints

    def close(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Stop the MCP servers, the demo server, the checkpoints' worker, the ready sandbox."""
        self.stop_mcp(loop)
        if self._checkpoints is not None:
            self._checkpoints.close()
        if self._reserve is not None:
            self._reserve.close()
        if self._demo is not None:
            self._demo.stop()
            self._demo = None


def _say_hook_line(view: ChatView, line: str) -> None:
    """A hook's line (a block, a broken hook) in the chat and the message area."""
    from .render_ops import Block

    view.render([Block(text=f"_[{line}]_")])
    view.notify(line, "warn")


def tool_env_opts(
    value: Any, adapters: Mapping[str, Any], mcp: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`opts.tool_system.env` with `keys` set to the variables adapters (builtin and
    configured) and MCP servers read secrets from."""
    from .adapters.catalog import key_variables

    opts = dict(value) if isinstance(value, Mapping) else {}
    opts["keys"] = key_variables(adapters, mcp)
    return opts
