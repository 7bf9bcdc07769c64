"""The session/driver seam: a chat session driven by something other than the model loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codecompanion.chat.chat import Chat
from codecompanion.chat.driver import Session, TurnStatus
from codecompanion.chat.model_loop import ModelLoop
from codecompanion.context.sources import ContextItem
from codecompanion.messages import Message, ToolCall
from codecompanion.persistence.history import ChatStore
from codecompanion.render_ops import Ready
from tests.support.chat import EchoTool, RecordingView, ScriptedAdapter, finish, make_chat


class ScriptedDriver:
    """Answers each turn with one scripted step: text, a pending call, a hang or a crash."""

    compacts = False

    def __init__(self, chat: Session, step: str = "text") -> None:
        self.chat = chat
        self.step = step
        self.cancelled = 0
        self.turns = 0

    def message(self, text: str, context: list[ContextItem]) -> Message | None:
        if text == "refuse":
            self.chat.view.notify("refused by the driver", "warn")
            return None
        return Message(role="user", content=f"<{text}>")

    async def turn(self) -> TurnStatus:
        self.turns += 1
        if self.step == "crash":
            raise RuntimeError("driver bug")
        if self.step in ("hang", "call"):
            if self.step == "call":
                call = ToolCall("c1", "echo", {})
                self.chat.add(Message(role="llm", visible=False, tool_calls=[call]))
            await asyncio.Event().wait()
        self.chat.add(Message(role="llm", content="answered"))
        return "success"

    def cancel(self) -> None:
        self.cancelled += 1

    def to_state(self) -> dict[str, str]:
        return {"driver": "scripted"}


def driven(step: str, tmp_path: Path | None = None) -> tuple[Chat, RecordingView, ScriptedDriver]:
    """A chat session whose turns `ScriptedDriver` produces."""
    drivers: list[ScriptedDriver] = []

    def build(chat: Chat) -> ScriptedDriver:
        drivers.append(ScriptedDriver(chat, step))
        return drivers[0]

    view = RecordingView()
    chat = Chat(
        chat_id="d1",
        adapter=ScriptedAdapter(),
        view=view,
        tool_factory=EchoTool(),
        store=ChatStore(tmp_path / "chats") if tmp_path else None,
        driver=build,
    )
    return chat, view, drivers[0]


async def test_the_model_loop_is_the_default_driver() -> None:
    chat, _view = make_chat(ScriptedAdapter())
    assert isinstance(chat.driver, ModelLoop)


async def test_a_driver_makes_the_message_and_the_session_ends_the_turn(tmp_path: Path) -> None:
    chat, view, _driver = driven("text", tmp_path)
    assert chat.submit("hi")
    await finish(chat)
    assert [m.content for m in chat.messages if m.role != "system"] == ["<hi>", "answered"]
    assert any(isinstance(op, Ready) for op in view.ops)
    assert view.events()[-1] == "ChatDone"
    saved = ChatStore(tmp_path / "chats").load("d1")
    assert saved is not None and saved["messages"][-1]["content"] == "answered"
    assert saved["driver"] == {"driver": "scripted"}
    assert chat.title == "hi"


async def test_a_refused_message_starts_no_turn() -> None:
    chat, view, driver = driven("text")
    assert not chat.submit("refuse")
    assert driver.turns == 0 and not chat.busy
    assert ("refused by the driver", "warn") in view.notices


async def test_stop_cancels_the_driver_and_answers_its_pending_call() -> None:
    chat, view, driver = driven("call")
    assert chat.submit("go")
    await asyncio.sleep(0.01)
    assert chat.busy
    assert chat.stop()
    await finish(chat)
    assert driver.cancelled == 1
    results = [m for m in chat.messages if m.role == "tool"]
    assert len(results) == 1 and results[0].content == "The tool call was cancelled."
    assert "ChatStopped" in view.events()


async def test_a_crashing_driver_is_one_line_and_the_chat_stays_usable() -> None:
    chat, view, driver = driven("crash")
    assert chat.submit("go")
    await finish(chat)
    assert any("internal error: driver bug" in line for line, _ in view.notices)
    assert not chat.busy
    driver.step = "text"
    assert chat.submit("again")
    await finish(chat)
    assert chat.messages[len(chat.messages) - 1].content == "answered"
