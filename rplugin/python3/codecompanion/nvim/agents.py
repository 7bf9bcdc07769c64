"""The host's side of agent chats: picking an agent's earlier session to resume
(`:CodeCompanionChat Resume`), and a chat's agent mode and options from its keymaps."""

from __future__ import annotations

import logging
from pathlib import Path

from ..acp.connection import AgentConnection, AgentError
from ..acp.driver import AgentDriver
from ..acp.process import agent_env
from ..chat.chat import Chat
from ..render_ops import Notice
from ..workspace import Workspace
from .bridge import Bridge
from .pickers import pick_index

log = logging.getLogger("codecompanion.nvim")


def agent_of(chat: Chat) -> AgentDriver | None:
    """The chat's agent driver, when an agent produces its turns."""
    driver = chat.driver
    return driver if isinstance(driver, AgentDriver) else None


async def pick_agent_session(bridge: Bridge, workspace: Workspace, name: str, cwd: Path) -> None:
    """List the agent's sessions for the project (`session/list`); Lua opens the one picked in
    a new chat, which loads it."""
    agent = workspace.external_agents().get(name)
    if agent is None:
        bridge.notice(Notice(text=f"no agent {name!r} (see :h codecompanion-acp)", level="error"))
        return
    resolved = {key: await workspace.keys.resolve(value) or "" for key, value in agent.env.items()}
    env = agent_env(workspace.env, agent.pass_env, resolved)
    try:
        connection = await AgentConnection.open(agent, env, cwd, None, log.warning)
    except AgentError as exc:
        bridge.notice(Notice(text=str(exc), level="error"))
        return
    try:
        if not (connection.can_list and connection.can_load):
            bridge.notice(Notice(text=f"{name} cannot list and load its sessions", level="warn"))
            return
        sessions = await connection.list_sessions(cwd)
    except AgentError as exc:
        bridge.notice(Notice(text=str(exc), level="error"))
        return
    finally:
        await connection.close()
    if not sessions:
        bridge.notice(Notice(text=f"{name} has no session for {cwd}"))
        return
    labels = [f"{s.updated_at or ''}  {s.title or s.session_id}".strip() for s in sessions]
    index = await pick_index(bridge, f"Resume a {name} session", labels)
    if index is not None:
        bridge.notify_lua(
            "codecompanion", "chat", {"adapter": name, "session": sessions[index].session_id}
        )


async def set_agent_mode(chat: Chat, mode: str) -> None:
    """`session/set_mode` for the chat's agent; one line when it fails."""
    driver = agent_of(chat)
    if driver is None:
        chat.view.notify("this chat has no agent: modes belong to agent chats", "info")
        return
    try:
        await driver.set_mode(mode)
    except AgentError as exc:
        chat.view.notify(str(exc), "error")
        return
    chat.view.notify(f"{driver.settings.name}: mode {driver.state.mode_name()}")


async def set_agent_option(chat: Chat, option: str, value: str | bool) -> None:
    """`session/set_config_option` for the chat's agent (model, thought level, ...)."""
    driver = agent_of(chat)
    if driver is None:
        chat.view.notify("this chat has no agent: options belong to agent chats", "info")
        return
    try:
        await driver.set_option(option, value)
    except AgentError as exc:
        chat.view.notify(str(exc), "error")
        return
    chat.view.notify(f"{driver.settings.name}: {option} = {value}")
