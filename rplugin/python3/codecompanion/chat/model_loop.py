"""The model loop: the turn driver that talks to a provider (send → stream → tools → send)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..adapters.base import Usage as TokenCount
from ..adapters.base import Warms
from ..adapters.http_errors import is_context_overflow
from ..context.images import ImageError
from ..context.sources import ContextItem
from ..errors import AdapterError, ContextTooLong, ProviderError
from ..messages import Message, ToolCall
from ..render_ops import Context, Lock, Spinner, Usage
from ..skills.chat_skills import TOOL as SKILL_TOOL
from ..skills.chat_skills import skills_of
from ..subagents.chat_agents import agents_of
from ..subagents.definitions import TOOL as AGENT_TOOL
from ..textcalls.again import constrains
from ..textcalls.prompt import TEXT_CALLS
from ..textcalls.session import repeats_last_round, skip_repeated_calls
from . import transcript
from .call_guard import CallGuard
from .compose import compose, unknown_mentions
from .driver import Session, TurnStatus
from .streamed_answer import Answer, stream_answer

if TYPE_CHECKING:
    from ..hooks.turn_hooks import TurnHooks
    from ..tools.runtime.system import BatchSummary

log = logging.getLogger("codecompanion.chat")

# Seconds into a tool round before the next request's connection is opened: the opening
# waits until the round's tools are under way (a command runs) instead of delaying their
# start; a round over sooner sends on a new connection, as it would have anyway.
WARM_AFTER = 0.01
NUDGE = (
    "You answered nothing. Go on with the task (call the next tool you need), or answer the user."
)
ANSWER_NOW = "You answered nothing again. Answer the user now, from the tool results above."
# How much of the user's request the nudge repeats: a small model that stopped mid-task has
# often lost it among the results (and asks what to do) unless it reads it again.
NUDGE_REQUEST_CHARS = 800


class ModelLoop:
    """Requests to the session's adapter and the tool rounds its answers ask for."""

    compacts = True

    def __init__(self, chat: Session) -> None:
        self.chat = chat
        self._turn_tokens = 0
        self._hooks: TurnHooks | None = None
        self._guard = CallGuard()
        # The server refused an answer held to a schema: this chat does not ask again.
        self._unconstrained = False

    # ----- the user's message --------------------------------------------------------------

    def message(self, text: str, context: list[ContextItem]) -> Message | None:
        """The user's text with its context and `@{tool}` mentions, as the model reads it."""
        chat = self.chat
        refused = self._refused_images(context)
        if refused:
            chat.view.notify(refused, "error")
            return None
        warning = unknown_mentions(chat.tools, text)
        if warning:
            chat.view.notify(warning, "warn")
        try:
            message = compose(chat.tools, text, context)
        except ImageError as exc:
            chat.view.notify(f"/image: {exc}; nothing was sent", "error")
            return None
        chat.tools.reset_rounds()
        self._sync_skills()
        agents = agents_of(chat.tools)
        if agents is not None and agents.sync(chat.messages, chat.tools.offered):
            chat.tools.add_tool(AGENT_TOOL)
        self._sync_system_prompts()
        chat.context.sync_rules()
        return message

    def _refused_images(self, context: list[ContextItem]) -> str | None:
        """One line when the message has images and this chat's adapter sends none."""
        if not any(item.kind == "image" for item in context):
            return None
        if getattr(self.chat.adapter, "takes_images", False):
            return None
        return (
            f"/image: the {self.chat.adapter.name} adapter sends no images (OpenAI, Anthropic, "
            "Gemini and Ollama do); nothing was sent"
        )

    def _sync_skills(self) -> None:
        """The skills' system message kept true, the `skill` tool offered while any is on."""
        chat = self.chat
        skills = skills_of(chat.tools)
        if skills is None:
            return
        line = skills.sync(chat.messages)
        if skills.enabled():
            chat.tools.add_tool(SKILL_TOOL)
        if line is not None:
            chat.view.render([Context(title=f"> {line}", text=skills.prompt() or None)])

    def _sync_system_prompts(self) -> None:
        """Insert each offered tool's and group's system prompt once, after the main prompt."""
        messages = self.chat.messages
        for tag, text in self.chat.tools.system_prompts():
            if not any(m.tag == tag for m in messages):
                position = sum(1 for m in messages if m.role == "system")
                messages.insert_system(text, tag, position)

    # ----- the turn --------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running tools (the session cancels the request's task)."""
        self.chat.tools.cancel()

    def to_state(self) -> dict[str, str]:
        """Nothing beyond the session's own state."""
        return {}

    async def turn(self) -> TurnStatus:
        """Request, run the answer's tools, send their results back, until the model is done."""
        first, repeated = True, False
        self._turn_tokens = 0
        self._guard.reset()
        hooks = self._turn_hooks()
        if hooks is not None and not await hooks.before():
            return "error"  # a UserPromptSubmit hook blocked it, and said why
        while True:
            answer = await self._request(header=first)
            first = False
            if answer.error or answer.cancelled:
                return "error" if answer.error else "cancelled"
            if not answer.calls:
                if self._nudged(answer) or (hooks is not None and await hooks.after()):
                    continue  # asked to go on, or a Stop hook sent the model back to work
                return "success"
            calls, repeated = self._screened(answer.calls, repeated)
            if calls is None:
                return "success"
            if not calls:
                continue  # every call was answered without running: the model reads why
            outcome = await self._tool_round(calls)
            if outcome.status == "cancelled":
                return "cancelled"
            if not outcome.auto_submit:  # includes the cap on automatic rounds
                return "success"

    def _nudged(self, answer: Answer) -> bool:
        """An empty answer to tool results: the model is asked to go on, with the user's
        request repeated; a second empty answer, to answer the user from the results; a third
        ends the turn (small models sometimes end a round of results with nothing at all)."""
        text = "".join(answer.text)
        if text.strip():
            return self._asked_to_edit(text)
        messages = list(self.chat.messages)
        last = len(messages) - 1
        if last >= 0 and messages[last].role == "llm" and not messages[last].tool_calls:
            last -= 1  # the blank answer itself, when it was stored
        before = messages[last] if last >= 0 else None
        if before is not None and before.role == "tool":
            content, line = nudge(messages), "_[the model answered nothing: asked to go on]_"
        elif before is not None and not before.visible and before.content == nudge(messages):
            content, line = ANSWER_NOW, "_[the model answered nothing again: asked to answer]_"
        else:
            return False  # not after results, or both nudges were given
        self.chat.add(Message(role="user", content=content, visible=False))
        self.chat.view.render([transcript.block(line)])
        return True

    def _asked_to_edit(self, text: str) -> bool:
        """An answer that shows a changed copy of a file read in this turn and calls nothing:
        with the editor loop on, the model is asked once to make the edit (one line in the
        chat)."""
        tools = self.chat.tools
        if not tools.offered:
            return False  # a plain chat loads none of the tools' machinery
        from ..after_edit.printed import ask_to_edit

        ask = ask_to_edit(text, list(self.chat.messages), tools.offered, tools.opts)
        if ask is None:
            return False
        self.chat.add(Message(role="user", content=ask, visible=False))
        line = "_[the model showed a changed file without editing it: asked to edit]_"
        self.chat.view.render([transcript.block(line)])
        return True

    def _screened(
        self, calls: list[ToolCall], repeated: bool
    ) -> tuple[list[ToolCall] | None, bool]:
        """The calls to run ([]: all answered unrun; None: the turn ends), and whether they
        repeated the round before (text calls; a second repeat in a row: the model is stuck)."""
        if repeats_last_round(list(self.chat.messages)):
            skip_repeated_calls(self.chat, calls)
            self.chat.save()
            return (None if repeated else []), True
        return self._guarded(calls), False

    def _guarded(self, calls: list[ToolCall]) -> list[ToolCall] | None:
        """The calls the guard lets run; the others answered here; None: the turn ends."""
        chat = self.chat
        review = self._guard.review(calls, chat.tools.malformed)
        for call, result in review.refused:
            chat.tool_status(call, "pending")
            chat.record_tool_result(call, result)
            chat.tool_status(call, "cancelled", result.detail)
        if review.stop is not None:
            chat.view.notify(review.stop, "warn")
            chat.view.render([transcript.block(f"_[{review.stop}]_")])
            chat.save()
            return None
        if review.refused:
            names = ", ".join(sorted({call.name for call, _ in review.refused}))
            chat.view.notify(f"the model repeated a {names} call a third time: not run", "warn")
        return review.run

    def _turn_hooks(self) -> TurnHooks | None:
        """The chat's turn hooks (made once, when the chat has hooks)."""
        if getattr(self.chat.tools, "hooks", None) is None:  # the hooks' modules: not loaded
            return None
        from ..hooks.chat_hooks import hooks_of
        from ..hooks.turn_hooks import TurnHooks

        hooks = hooks_of(self.chat.tools)
        if hooks is None:
            return None
        if self._hooks is None or self._hooks.hooks is not hooks:
            self._hooks = TurnHooks(hooks, self.chat.messages, self.chat.add)
        return self._hooks

    async def _tool_round(self, calls: list[ToolCall]) -> BatchSummary:
        """Run one batch of calls; the project is captured before and after one that writes."""
        warming = None
        adapter = self.chat.adapter
        if isinstance(adapter, Warms):  # the results go back on a connection opened meanwhile
            warming = asyncio.get_running_loop().call_later(WARM_AFTER, adapter.warm)
        try:
            outcome = await self._run_tools(calls)
        finally:
            if warming is not None:
                warming.cancel()
        self.chat.save()
        self.chat.show_approvals()
        return outcome

    async def _run_tools(self, calls: list[ToolCall]) -> BatchSummary:
        """The batch itself, captured around when it may write."""
        chat = self.chat
        writes = not chat.tools.read_only(calls)
        if writes:
            # The project's capture (on the checkpoints' worker, or at once when a stat walk is
            # all it takes) and the chat's save are both on disk before a tool starts (a
            # command may outlive the host).
            captured = chat.checkpoints.before_tools() if chat.checkpoints is not None else None
            chat.save_now(durable=False)
            if captured is not None:
                await captured
        outcome = await chat.tools.run(calls)
        if writes and chat.checkpoints is not None:
            chat.checkpoints.after_tools()
        return outcome

    # ----- one request -----------------------------------------------------------------------

    async def _request(self, header: bool = True) -> Answer:
        """Send the history, stream the answer into the buffer, store what came back.

        Automatic rounds after tool results continue under the turn's one `## LLM` header.
        """
        chat = self.chat
        answer = Answer()
        # Rules of a subfolder a tool round worked in, and room for the request, come first.
        chat.view.render([Lock()])
        chat.context.sync_rules()
        problem = await chat.context.before_request()
        ops = [Lock(), Spinner(on=True, text="waiting")]
        if header:
            title = transcript.llm_header(chat.adapter.name, chat.model)
            ops.insert(0, transcript.header("llm", title))
        chat.view.render(ops)
        chat.fire("RequestStarted")
        for message in chat.messages:
            message.meta.sent = True
        try:
            if problem is None:
                await self._stream(answer, header)
                await self._ask_for_call(answer)
                self._read_shown_edit(answer)
            else:
                answer.error = problem
        except asyncio.CancelledError:
            answer.cancelled = True
            self._store_answer(answer)
            chat.fire("RequestFinished", status="cancelled")
            raise
        # The answer's tail goes to the buffer before the bookkeeping of storing it. An answer
        # of calls alone has no tail: what it queued waits with the tool round's progress, so
        # Neovim is not written to while the round starts.
        if any(answer.text) or not answer.calls:
            chat.view.flush()
        self._store_answer(answer)
        chat.fire("RequestFinished", status="error" if answer.error else "success")
        return answer

    async def _stream(self, answer: Answer, header: bool) -> None:
        """Stream one answer; a provider's context error compacts and retries, once."""
        chat = self.chat
        try:
            await stream_answer(chat, answer, continuation=not header)
            return
        except AdapterError as exc:
            if not _too_long(exc) or answer.text or answer.calls or answer.reasoning:
                answer.error = str(exc)
                return
            chat.context.refused(str(exc))
        line = "the provider says the chat is too long for the model: compacting and retrying once"
        chat.view.render([transcript.block(f"_[context: {line}]_")])
        chat.view.notify(line, "warn")
        problem = await chat.context.before_request(force=True)
        if problem is not None:
            answer.error = problem
            return
        try:
            await stream_answer(chat, answer, continuation=True)
        except AdapterError as exc:
            answer.error = str(exc)

    async def _ask_for_call(self, answer: Answer) -> None:
        """An answer that wrote a call which could not run: the same request once more, its
        answer held to one call of the offered tools; that call runs, after the first answer's
        text. A server that refuses the schema is not asked again in this chat (the first
        answer then stands, as without this)."""
        chat = self.chat
        if not answer.missed_call or self._unconstrained or not constrains(chat.adapter):
            return
        again = Answer()
        chat.view.render([Spinner(on=True, text="asking again for the call")])
        try:
            await stream_answer(chat, again, continuation=True, constrained=True)
        except AdapterError as exc:
            self._unconstrained = True
            log.info("%s: an answer held to a call schema was refused: %s", chat.adapter.name, exc)
            return
        self._count_tokens(answer.usage)  # the first answer's; the store counts the second's
        answer.usage = again.usage or answer.usage
        if not again.calls:
            return
        answer.calls, answer.calls_extra, answer.state = again.calls, again.calls_extra, again.state
        line = "_[the call written as text above did not run: asked again for it as a call]_"
        chat.view.render([transcript.block(line)])

    def _read_shown_edit(self, answer: Answer) -> None:
        """An answer that calls nothing but shows a changed copy of a file read in this turn:
        the change is read as the edit call it means, as calls written as text are (asked
        about unless `ask_recovered_calls = False`), once per user message."""
        chat = self.chat
        if answer.calls or answer.error or not chat.tools.offered:
            return  # a plain chat loads none of this
        from ..textcalls.mode import asks_recovered, recovers
        from ..textcalls.shown_edit import EDIT_TOOL, SHOWN_EDIT, offered_before, shown_edit

        if EDIT_TOOL not in chat.tools.offered or not recovers(chat.adapter):
            return
        messages = list(chat.messages)
        found = shown_edit("".join(answer.text), messages)
        if found is None or not found.edits or offered_before(messages):
            return
        call = ToolCall(
            "shown_edit", EDIT_TOOL, found.arguments(), asks=asks_recovered(chat.adapter)
        )
        answer.calls = [chat.messages.unique_calls()(call)]
        answer.calls_extra = {TEXT_CALLS: SHOWN_EDIT}
        line = f"_[the answer shows `{found.path}` changed: read as an edit of it]_"
        chat.view.render([transcript.block(line)])

    def _store_answer(self, answer: Answer) -> None:
        chat = self.chat
        text = "".join(answer.text)
        reasoning = "".join(answer.reasoning) or None
        incomplete = answer.error or ("stopped" if answer.cancelled else None)
        message: Message | None = None
        if text or reasoning or incomplete:
            message = Message(role="llm", content=text, reasoning=reasoning, extra=answer.extra)
            if incomplete:
                message.extra["incomplete"] = incomplete
            chat.add(message)
        if incomplete:
            # Calls of an unfinished answer are dropped, so no call is left without a result.
            answer.calls = []
            chat.view.render([transcript.block(f"_[incomplete: {incomplete}]_")])
            if answer.error:
                chat.view.notify(answer.error, "error")
        elif answer.calls:
            extra = {"provider_state": answer.state} if answer.state else {}
            extra.update(answer.calls_extra)
            message = Message(role="llm", visible=False, tool_calls=list(answer.calls), extra=extra)
            chat.add(message)
        if not answer.cancelled and not answer.error:
            chat.context.answered(answer.usage, message)
        self._count_tokens(answer.usage)

    def _count_tokens(self, usage: TokenCount | None) -> None:
        """Add an answer's tokens to the turn's, shown in its header (tool rounds add up)."""
        if usage and usage.total_tokens:
            self._turn_tokens += usage.total_tokens
            self.chat.view.render([Usage(text=f"({self._turn_tokens} tokens)")])


def _too_long(exc: AdapterError) -> bool:
    """True for a provider's refusal of a request longer than the model's window."""
    return isinstance(exc, ContextTooLong) or (
        isinstance(exc, ProviderError) and is_context_overflow(str(exc))
    )


def nudge(messages: Sequence[Message]) -> str:
    """The message that asks the model to go on, repeating the user's last request."""
    request = next(
        (m.content for m in reversed(messages) if m.role == "user" and m.visible and m.content),
        "",
    ).strip()
    if not request:
        return NUDGE
    if len(request) > NUDGE_REQUEST_CHARS:
        request = request[:NUDGE_REQUEST_CHARS] + " …"
    return f"{NUDGE}\nThe user's request:\n{request}"
