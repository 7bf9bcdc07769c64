"""Tool systems for tests, made by the product's one builder (`Workspace.tool_system`).

A test gives the tools (a registry of its own, or the builtins with `tool_opts`) and the chat's
options; the builder adds what every chat gets: the configured tool options with every adapter's
key variable withheld from tool processes, the permissions' command sandbox (off unless the test
turns it on) and mode, the TLS context.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from codecompanion.adapters.base import ChatAdapter
from codecompanion.chat.chat import Chat
from codecompanion.config import Config
from codecompanion.ports import Approver, ChatView, Editor, EventSink
from codecompanion.tools.model.registry import ToolRegistry
from codecompanion.tools.runtime.protocol import ChatForTools
from codecompanion.tools.runtime.system import ToolSystem
from codecompanion.workspace import HostOptions, Workspace
from tests.support.fakes import RecordingEvents, ScriptedApprover


def built_tool_system(
    *,
    chat: ChatForTools,
    registry: ToolRegistry,
    approver: Approver,
    events: EventSink,
    cwd: Path,
    opts: dict[str, Any] | None = None,
    yolo: bool = False,
    editor: Editor | None = None,
    permissions: dict[str, Any] | None = None,
    adapters: dict[str, dict[str, Any]] | None = None,
) -> ToolSystem:
    """A chat's tool system as Neovim and the command line build it, over `registry`;
    `adapters` are the configured ones (their key variables are withheld from tool processes)."""
    config = Config(
        adapters=dict(adapters or {}),
        opts={"tool_system": dict(opts or {})},
        permissions={"sandbox": False, **(permissions or {})},
    )
    # Saved chats would go here; a tool system never writes one.
    data_dir = Path(tempfile.gettempdir()) / "codecompanion-tests-unused"
    workspace = Workspace(HostOptions(data_dir=str(data_dir)), config=config, registry=registry)
    return workspace.tool_system(
        chat, approver=approver, events=events, cwd=cwd, editor=editor, yolo=yolo
    )


def built_chat(
    adapter: ChatAdapter,
    registry: ToolRegistry,
    cwd: Path,
    view: ChatView,
    *,
    chat_id: str = "chat",
    approver: Approver | None = None,
    opts: dict[str, Any] | None = None,
    yolo: bool = False,
    permissions: dict[str, Any] | None = None,
) -> Chat:
    """A chat on `adapter` whose tools are `built_tool_system` over `registry` in `cwd` (the
    user's answers scripted unless `approver` is given, events recorded)."""

    def tools(chat: ChatForTools) -> ToolSystem:
        return built_tool_system(
            chat=chat,
            registry=registry,
            approver=approver or ScriptedApprover(),
            events=RecordingEvents(),
            cwd=cwd,
            opts=opts,
            yolo=yolo,
            permissions=permissions,
        )

    return Chat(chat_id=chat_id, adapter=adapter, view=view, tool_factory=tools)
