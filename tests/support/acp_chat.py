"""A chat session driven by the scripted ACP agent, with the recording view, a scripted
approver and a fake editor; the agent is a real process speaking the SDK's protocol."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codecompanion.acp.adapter import AgentAdapter
from codecompanion.acp.driver import AgentDriver, AgentHost
from codecompanion.acp.settings import AgentSettings
from codecompanion.chat.chat import Chat
from codecompanion.persistence.history import ChatStore
from codecompanion.tools import tool_registry
from tests.support.builder import built_tool_system
from tests.support.chat import RecordingView
from tests.support.fakes import FakeEditor, RecordingEvents, ScriptedApprover

# Run with `python -I`: this folder has modules named like the standard library's (secrets).
AGENT = Path(__file__).with_name("scripted_acp_agent.py")


@dataclass
class AgentChat:
    """One chat, its driver and the fakes around it."""

    chat: Chat
    driver: AgentDriver
    view: RecordingView
    approver: ScriptedApprover
    editor: FakeEditor
    root: Path
    logs: Path
    env: dict[str, str] = field(default_factory=dict)

    async def turn(self, text: str, timeout: float = 20.0) -> None:
        """Submit `text` and wait for the turn to end."""
        assert self.chat.submit(text), self.view.notices
        assert self.chat._task is not None
        await asyncio.wait_for(asyncio.shield(self.chat._task), timeout)

    def answers(self) -> list[str]:
        """The stored answers' text."""
        return [m.content or "" for m in self.chat.messages if m.role == "llm" and m.visible]

    def notices(self) -> str:
        return "\n".join(line for line, _ in self.view.notices)

    async def close(self) -> None:
        await self.driver.close()


def agent_chat(
    tmp_path: Path,
    *,
    env: dict[str, str] | None = None,
    approver: ScriptedApprover | None = None,
    session_id: str | None = None,
    chat_id: str = "a1",
    mode: str | None = None,
    messages: Any = None,
    settings: AgentSettings | None = None,
    mcp: dict[str, Any] | None = None,
) -> AgentChat:
    """A chat whose turns the scripted agent produces, working in `tmp_path/project`."""
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    logs = tmp_path / "logs"
    approver = approver or ScriptedApprover()
    editor = FakeEditor()
    view = RecordingView()
    agent_env = {"SCRIPTED_STATE": str(tmp_path / "agent-state.json"), **(env or {})}
    settings = settings or AgentSettings(
        name="scripted", cmd=(sys.executable, "-I", str(AGENT)), env=agent_env
    )

    async def resolve(value: str) -> str:
        return value

    host = AgentHost(
        env=dict(os.environ), resolve=resolve, log_dir=logs, editor=editor, mcp=mcp or {}
    )
    drivers: list[AgentDriver] = []

    def driver(chat: Chat) -> AgentDriver:
        drivers.append(AgentDriver(chat, settings, host, session_id))
        return drivers[0]

    def tools(chat: Chat) -> Any:
        permissions = {"mode": mode} if mode else None
        return built_tool_system(
            chat=chat,
            registry=tool_registry(),
            approver=approver,
            events=RecordingEvents(),
            cwd=root,
            editor=editor,
            permissions=permissions,
        )

    adapter = AgentAdapter("scripted", list, lambda: drivers[0].close())
    chat = Chat(
        chat_id=chat_id,
        adapter=adapter,  # type: ignore[arg-type]
        view=view,
        tool_factory=tools,
        store=ChatStore(tmp_path / "chats"),
        system_prompt="",
        messages=messages,
        driver=driver,
    )
    return AgentChat(chat, drivers[0], view, approver, editor, root, logs, agent_env)
