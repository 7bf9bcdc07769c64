"""One streamed answer: the provider's events shown in the buffer and gathered for the store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..adapters.base import (
    ChatAdapter,
    ConstrainsAnswers,
    Event,
    ProviderState,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from ..messages import MessageStore, ToolCall
from ..ports import ChatView
from ..render_ops import Spinner
from ..textcalls.again import call_schema
from ..textcalls.session import Request, plan_request
from . import transcript

if TYPE_CHECKING:
    from ..budget.keeper import ContextKeeper
    from ..tools.runtime.system import ToolSystem


class StreamingChat(Protocol):
    """What streaming an answer needs of the chat."""

    adapter: ChatAdapter
    view: ChatView
    messages: MessageStore
    tools: ToolSystem
    context: ContextKeeper  # what is sent of the history

    def fire(self, name: str, **extra: Any) -> None:
        """Fire a User event."""


@dataclass
class Answer:
    """What one streamed response produced."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    error: str | None = None
    cancelled: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # of the text message
    calls_extra: dict[str, Any] = field(default_factory=dict)  # of the calls message
    # No call, but a block that reads as one the model meant (see textcalls.again).
    missed_call: bool = False


async def stream_answer(
    chat: StreamingChat, answer: Answer, continuation: bool = False, constrained: bool = False
) -> None:
    """Send `chat`'s history and stream the answer into its buffer and into `answer`.

    `constrained`: the answer is held to one call of the offered tools (the adapter must be
    `ConstrainsAnswers`).
    """
    # A round after tool results starts its text on a fresh line below the tool output.
    state = {"separate": continuation, "streaming": False, "reasoning": False}
    for problem in await chat.tools.prepare():
        chat.view.notify(problem, "warn")
    request = await plan_request(chat.adapter, chat.tools, chat.context.outgoing())
    # The estimate the provider's usage will correct is counted once the request is on its
    # way (the loop's next turn comes when the send waits for the answer), not between the
    # tool results and the request; at the latest when the stream is over (a refusal learns
    # from it).
    count = _once(chat.context.sending)
    asyncio.get_running_loop().call_soon(count)
    try:
        await _receive(chat, answer, request, state, _events(chat, request, constrained))
    finally:
        count()
    reader = request.reader
    # Calls written as text (prompt mode, or recovered) run like native ones.
    _show_text(chat.view, reader.finish(native_calls=bool(answer.calls)), state)
    if reader.calls:
        name = chat.messages.unique_calls(answer.calls)
        answer.calls.extend(name(call) for call in reader.calls)
        answer.calls_extra = reader.calls_extra()
    text, answer.extra = reader.stored()
    answer.text = [text]
    answer.missed_call = not answer.calls and reader.missed()


def _events(chat: StreamingChat, request: Request, constrained: bool) -> AsyncIterator[Event]:
    """The adapter's answer to `request`: as it comes, or held to the offered tools' calls."""
    adapter = chat.adapter
    if constrained and isinstance(adapter, ConstrainsAnswers):
        schema = call_schema(chat.tools.schemas())
        return adapter.stream_constrained(request.messages, request.tools, schema)
    return adapter.stream(request.messages, request.tools)


async def _receive(
    chat: StreamingChat,
    answer: Answer,
    request: Request,
    state: dict[str, bool],
    events: AsyncIterator[Event],
) -> None:
    """The answer to `request`, streamed into the buffer and gathered into `answer`."""
    reader = request.reader
    name: Callable[[ToolCall], ToolCall] | None = None  # made at the first call
    async for event in events:
        if not state["streaming"]:
            state["streaming"] = True
            chat.view.render([Spinner(on=False)])
            chat.fire("RequestStreaming")
        if isinstance(event, TextDelta):
            answer.text.append(event.text)  # the raw text, kept if the answer breaks off
            _show_text(chat.view, reader.text(event.text), state)
        elif isinstance(event, ReasoningDelta):
            if not state["reasoning"] and not answer.reasoning:
                chat.view.render([transcript.block("### Reasoning\n\n")])
            state["reasoning"] = True
            answer.reasoning.append(event.text)
            chat.view.render([transcript.append(event.text)])
        elif isinstance(event, ToolCallEvent):
            name = name or chat.messages.unique_calls(answer.calls)
            answer.calls.append(name(event.call))
        elif isinstance(event, ProviderState):
            answer.state.update(event.data)
        elif isinstance(event, Usage):
            answer.usage = event


def _once(action: Callable[[], None]) -> Callable[[], None]:
    """`action`, run by the first call of what this returns only."""
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run


def _show_text(view: ChatView, text: str, state: dict[str, bool]) -> None:
    if not text:
        return
    if state["reasoning"]:
        state["reasoning"] = False
        view.render([transcript.block("### Response\n\n")])
    op = transcript.block if state["separate"] else transcript.append
    state["separate"] = False
    view.render([op(text)])
