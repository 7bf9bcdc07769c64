"""The chat: one conversation and its turn loop (send → stream → tools → send)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..adapters.base import ChatAdapter, Warms
from ..adapters.base import Usage as TokenCount
from ..adapters.http_errors import is_context_overflow
from ..budget.keeper import ContextKeeper
from ..context.images import ImageError
from ..context.sources import ContextItem, context_ops
from ..errors import AdapterError, ContextTooLong, ProviderError
from ..messages import Message, MessageStore, Role, Status, ToolCall, ToolResult
from ..persistence.history import ChatStore
from ..ports import ChatView, EventSink
from ..render_ops import Lock, Ready, Replace, SetVar, Spinner, Tool, ToolStatus, Usage
from ..textcalls.session import repeats_last_round, skip_repeated_calls
from . import transcript
from .compose import compose, first_line, unknown_mentions
from .streamed_answer import Answer, stream_answer

if TYPE_CHECKING:
    from ..checkpoints import ChatCheckpoints
    from ..tools.runtime.system import BatchSummary, ToolSystem

log = logging.getLogger("codecompanion.chat")

SYSTEM_PROMPT = (
    "You are an AI programming assistant working inside the Neovim text editor. "
    "Answer concisely and precisely, use Markdown code blocks with the language named, "
    "and use the tools you are given when they help; tool results are facts about the "
    "user's machine."
)
# Seconds a save waits: the saves a tool round asks for land after its next request has left,
# never between the end of a stream and the request that carries the results.
SAVE_DELAY = 0.1
# Seconds into a tool round before the next request's connection is opened: the opening
# waits until the round's tools are under way (a command runs) instead of delaying their
# start; a round over sooner sends on a new connection, as it would have anyway.
WARM_AFTER = 0.01


class Chat:
    """One chat buffer's conversation; owns its messages, adapter and tool system."""

    def __init__(
        self,
        *,
        chat_id: str,
        adapter: ChatAdapter,
        view: ChatView,
        events: EventSink,
        tool_factory: Callable[[Chat], ToolSystem],
        store: ChatStore | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        messages: MessageStore | None = None,
    ) -> None:
        self.id = chat_id
        self.adapter = adapter
        self.view = view
        self.events = events
        self.store = store
        self.messages = messages or MessageStore()
        self.tools = tool_factory(self)
        self.title: str | None = None
        self.updated = _now()  # the time of the last message: what the Restore picker shows
        self._task: asyncio.Task[None] | None = None
        self._full_outputs: dict[str, str] = {}
        self._ran_arguments: dict[str, dict[str, Any]] = {}  # call id -> what it runs with
        self._save_pending = False
        self._turn_tokens = 0
        self.context = ContextKeeper(self)  # rules files, the token budget, the meter
        # Captures of the project around turns and tool rounds (the host sets it; tests may not).
        self.checkpoints: ChatCheckpoints | None = None
        if system_prompt and not any(m.tag == "system_prompt" for m in self.messages):
            self.messages.insert_system(system_prompt, "system_prompt", 0)

    # ----- state -------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a request or its tools run."""
        return self._task is not None and not self._task.done()

    @property
    def model(self) -> str | None:
        """The adapter's configured model."""
        return self.adapter.settings.model

    def _event_data(self, **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "adapter": self.adapter.name, "model": self.model, **extra}

    def fire(self, name: str, **extra: Any) -> None:
        """Fire a User event ordered with the buffer updates around it."""
        self.view.render([transcript.event(name, self._event_data(**extra))])

    def to_state(self) -> dict[str, Any]:
        """Everything needed to restore this chat."""
        return {
            "id": self.id,
            "title": self.title,
            "adapter": self.adapter.name,
            "model": self.model,
            "updated": self.updated,
            "messages": self.messages.to_list(),
            "tools": self.tools.to_state(),
            "cwd": str(getattr(self.tools, "cwd", "") or "") or None,
            "context": self.context.to_state(),
        }

    def save(self) -> None:
        """Save soon: every save asked for within SAVE_DELAY becomes one write."""
        if self.store is None or self._save_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.save_now()
            return
        self._save_pending = True
        loop.call_later(SAVE_DELAY, self._deferred_save)

    def _deferred_save(self) -> None:
        if self._save_pending:
            self._save_pending = False
            self.save_now(durable=False)

    def save_now(self, durable: bool = True) -> None:
        """Persist the chat now (atomic write); a failure is logged, never raised into the turn."""
        if self.store is None:
            return
        self._save_pending = False  # this write includes whatever a deferred one would
        try:
            self.store.save(self.id, self.to_state(), durable)
        except (OSError, ValueError) as exc:
            log.error("saving chat %s failed: %s", self.id, exc)
            self.view.notify(f"could not save the chat: {exc}", "error")

    def add(self, message: Message) -> Message:
        """Append a message and save the chat."""
        self.messages.add(message)
        self.updated = _now()
        self.save()
        return message

    # ----- the turn loop ---------------------------------------------------------------

    def submit(self, text: str, context: list[ContextItem] | None = None) -> bool:
        """Start a turn with the user's text and context; refused (one line) when busy or empty."""
        if self.busy:
            self.view.notify("a request is running: wait, or stop it with q", "warn")
            return False
        if not text.strip():
            self.view.notify("nothing to send: type your message under ## Me", "info")
            return False
        if text.strip() == "/compact":  # typed as the whole message: a command, not a question
            return self.compact()
        context = context or []
        refused = self._refused_images(context)
        if refused:
            self.view.notify(refused, "error")
            return False
        warning = unknown_mentions(self.tools, text)
        if warning:
            self.view.notify(warning, "warn")
        try:
            message = compose(self.tools, text, context)
        except ImageError as exc:
            self.view.notify(f"/image: {exc}; nothing was sent", "error")
            return False
        self.tools.reset_rounds()
        self._sync_system_prompts()
        self.context.sync_rules()
        if self.title is None:
            self.title = first_line(text)
        if context:
            self.view.render(context_ops(context))
        self.add(message)
        if self.checkpoints is not None:
            self.checkpoints.turn_started(text, message.meta.id)
        self.fire("ChatSubmitted")
        self._start()
        return True

    def _refused_images(self, context: list[ContextItem]) -> str | None:
        """One line when the message has images and this chat's adapter sends none."""
        if not any(item.kind == "image" for item in context):
            return None
        if getattr(self.adapter, "takes_images", False):
            return None
        return (
            f"/image: the {self.adapter.name} adapter sends no images (OpenAI, Anthropic, Gemini "
            "and Ollama do); nothing was sent"
        )

    def regenerate(self) -> bool:
        """Drop the last answer (and its tool rounds) and ask again."""
        if self.busy:
            self.view.notify("a request is running", "warn")
            return False
        last_user = max((i for i, m in enumerate(self.messages) if m.role == "user"), default=None)
        if last_user is None:
            self.view.notify("nothing to regenerate", "info")
            return False
        self.messages.truncate(last_user + 1)
        self.save()
        self.view.render([transcript.block("_(regenerating)_")])
        self._start()
        return True

    def _start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    def compact(self) -> bool:
        """`/compact`: summarise the earlier conversation now; refused (one line) while busy."""
        if self.busy:
            self.view.notify("a request is running: compact once it has finished", "warn")
            return False
        self._task = asyncio.ensure_future(self._compact())
        return True

    async def _compact(self) -> None:
        self.view.render([Lock()])
        try:
            if not await self.context.compact_now():
                self.view.notify("nothing was compacted", "info")
        except Exception as exc:  # a bug: the chat stays usable
            log.exception("chat %s: compaction failed", self.id)
            self.view.notify(f"internal error: {exc} (see the log)", "error")
        finally:
            self.view.render(
                [
                    Spinner(on=False),
                    Ready(text=transcript.USER_HEADER),
                ]
            )
            self.save_now()

    async def _run(self) -> None:
        status = "success"
        first, repeated = True, False
        self._turn_tokens = 0
        try:
            while True:
                answer = await self._request(header=first)
                first = False
                if answer.error or answer.cancelled:
                    status = "error" if answer.error else "cancelled"
                    break
                if not answer.calls:
                    break
                if repeats_last_round(list(self.messages)):
                    skip_repeated_calls(self, answer.calls)
                    self.save()
                    if repeated:  # a second repeat in a row: the model is stuck
                        break
                    repeated = True
                    continue
                repeated = False
                outcome = await self._tool_round(answer.calls)
                if outcome.status == "cancelled":
                    status = "cancelled"
                    break
                if not outcome.auto_submit:  # includes the cap on automatic rounds
                    break
        except asyncio.CancelledError:
            status = "cancelled"
            self._answer_pending("cancelled")
        except Exception as exc:  # a bug: log it, tell the user in one line, keep the chat usable
            log.exception("chat %s turn failed", self.id)
            self.view.notify(f"internal error: {exc} (see the log)", "error")
            status = "error"
            self._answer_pending("error")
        finally:
            self.messages.cycle += 1
            await self._turn_summary()
            self.view.render([Spinner(on=False), Ready(text=transcript.USER_HEADER)])
            # The answer's last text is on screen before the (fsynced) save.
            self.view.flush()
            self.save_now()
            if status == "cancelled":
                self.fire("ChatStopped")
            self.fire("ChatDone", status=status)

    async def _tool_round(self, calls: list[ToolCall]) -> BatchSummary:
        """Run one batch of calls; the project is captured before and after one that writes."""
        warming = None
        if isinstance(self.adapter, Warms):  # the results go back on a connection opened meanwhile
            warming = asyncio.get_running_loop().call_later(WARM_AFTER, self.adapter.warm)
        try:
            outcome = await self._run_tools(calls)
        finally:
            if warming is not None:
                warming.cancel()
        self.save()
        self.show_approvals()
        return outcome

    async def _run_tools(self, calls: list[ToolCall]) -> BatchSummary:
        """The batch itself, captured around when it may write."""
        writes = not self.tools.read_only(calls)
        if writes:
            # The project's capture (on the checkpoints' worker, or at once when a stat walk is
            # all it takes) and the chat's save are both on disk before a tool starts (a
            # command may outlive the host).
            captured = self.checkpoints.before_tools() if self.checkpoints is not None else None
            self.save_now(durable=False)
            if captured is not None:
                await captured
        outcome = await self.tools.run(calls)
        if writes and self.checkpoints is not None:
            self.checkpoints.after_tools()
        return outcome

    def show_approvals(self) -> None:
        """Tell the buffer how many approvals the chat remembers and whether YOLO is on
        (`status()` shows them)."""
        remembered = self.tools.approvals.count()
        self.view.render(
            [
                SetVar(name="codecompanion_approvals", value=remembered),
                SetVar(name="codecompanion_yolo", value=self.tools.yolo),
            ]
        )

    async def _turn_summary(self) -> None:
        """One line of what the turn's tools changed in the project, when they changed files."""
        if self.checkpoints is None:
            return
        try:
            line = await self.checkpoints.turn_ended()
        except asyncio.CancelledError:  # a second stop, or the host quitting: the turn still ends
            log.debug("turn summary cancelled")
            return
        except Exception:
            log.exception("turn summary failed")
            return
        if line:
            self.view.render([transcript.block(f"_{line}_")])
            last = self.messages[len(self.messages) - 1] if len(self.messages) else None
            if last is not None and last.role in ("llm", "tool"):
                last.extra["changes"] = line  # a restored chat shows it again

    async def _request(self, header: bool = True) -> Answer:
        """Send the history, stream the answer into the buffer, store what came back.

        Automatic rounds after tool results continue under the turn's one `## LLM` header.
        """
        answer = Answer()
        # Rules of a subfolder a tool round worked in, and room for the request, come first.
        self.view.render([Lock()])
        self.context.sync_rules()
        problem = await self.context.before_request()
        ops = [Lock(), Spinner(on=True, text="waiting")]
        if header:
            ops.insert(
                0, transcript.header("llm", transcript.llm_header(self.adapter.name, self.model))
            )
        self.view.render(ops)
        self.fire("RequestStarted")
        for message in self.messages:
            message.meta.sent = True
        try:
            if problem is None:
                await self._stream(answer, header)
            else:
                answer.error = problem
        except asyncio.CancelledError:
            answer.cancelled = True
            self._store_answer(answer)
            self.fire("RequestFinished", status="cancelled")
            raise
        # The answer's tail goes to the buffer before the bookkeeping of storing it. An answer
        # of calls alone has no tail: what it queued waits with the tool round's progress, so
        # Neovim is not written to while the round starts.
        if any(answer.text) or not answer.calls:
            self.view.flush()
        self._store_answer(answer)
        status = "error" if answer.error else "success"
        self.fire("RequestFinished", status=status)
        return answer

    async def _stream(self, answer: Answer, header: bool) -> None:
        """Stream one answer; a provider's context error compacts and retries, once."""
        try:
            await stream_answer(self, answer, continuation=not header)
            return
        except AdapterError as exc:
            if not _too_long(exc) or answer.text or answer.calls or answer.reasoning:
                answer.error = str(exc)
                return
            self.context.refused(str(exc))
        line = "the provider says the chat is too long for the model: compacting and retrying once"
        self.view.render([transcript.block(f"_[context: {line}]_")])
        self.view.notify(line, "warn")
        problem = await self.context.before_request(force=True)
        if problem is not None:
            answer.error = problem
            return
        try:
            await stream_answer(self, answer, continuation=True)
        except AdapterError as exc:
            answer.error = str(exc)

    def _store_answer(self, answer: Answer) -> None:
        text = "".join(answer.text)
        reasoning = "".join(answer.reasoning) or None
        incomplete = answer.error or ("stopped" if answer.cancelled else None)
        message: Message | None = None
        if text or reasoning or incomplete:
            message = Message(role="llm", content=text, reasoning=reasoning, extra=answer.extra)
            if incomplete:
                message.extra["incomplete"] = incomplete
            self.add(message)
        if incomplete:
            # Calls of an unfinished answer are dropped, so no call is left without a result.
            answer.calls = []
            self.view.render([transcript.block(f"_[incomplete: {incomplete}]_")])
            if answer.error:
                self.view.notify(answer.error, "error")
        elif answer.calls:
            extra = {"provider_state": answer.state} if answer.state else {}
            extra.update(answer.calls_extra)
            message = Message(role="llm", visible=False, tool_calls=list(answer.calls), extra=extra)
            self.add(message)
        if not answer.cancelled and not answer.error:
            self.context.answered(answer.usage, message)
        self._count_tokens(answer.usage)

    def _count_tokens(self, usage: TokenCount | None) -> None:
        """Add an answer's tokens to the turn's, shown in its header (tool rounds add up)."""
        if usage and usage.total_tokens:
            self._turn_tokens += usage.total_tokens
            self.view.render([Usage(text=f"({self._turn_tokens} tokens)")])

    def _answer_pending(self, status: Status) -> None:
        """Give every call still without a result one (stop or crash mid-tools)."""
        for call in self.messages.pending_calls():
            self.record_tool_result(call, ToolResult(status, f"The tool call was {status}."))

    def stop(self) -> bool:
        """Cancel the request and running tools; every pending call gets a result."""
        if not self.busy or self._task is None:
            return False
        self.tools.cancel()
        self._task.cancel()
        return True

    # ----- the tool system's view of the chat (ToolChat) ---------------------------------

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Store one call's result (through the store's one recorder) and show it: how the tool
        system's results, a repeated call's and a call a stop or crash left without one arrive."""
        extra: dict[str, Any] = {}
        ran = self._ran_arguments.pop(call.id, None)
        if ran is not None and ran != call.arguments:
            # The user edited the call: a restored chat shows what ran, not what was asked.
            extra["arguments"] = ran
        if result.full_output is not None and result.full_output != result.for_llm:
            self._full_outputs[call.id] = result.full_output
        self.messages.record_result(call, result, extra)
        self.updated = _now()
        self.save()
        # What the model was sent stays one keystroke away: folded under the user's text.
        shown = transcript.tool_output(call.id, result.for_llm, result.for_user)
        if shown is not None:
            self.view.render([shown])

    def add_tool_message(self, role: str, content: str, visible: bool) -> None:
        """A message tool code added (`tools.chat.add_message`): stored, and shown if visible."""
        kind: Role = "llm" if role == "llm" else "system" if role == "system" else "user"
        self.add(Message(role=kind, content=content, visible=visible))
        if visible:
            self.view.render([transcript.block(content)])

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show a call's status on its line (the line appears with the first status)."""
        if status == "pending":
            title = transcript.tool_title(call)
            self.view.render([Tool(call_id=call.id, title=title, status=status)])
        else:
            # The arguments that run: edited ones replace the model's.
            running = transcript.tool_title(call) if status == "running" else None
            if status == "running":
                self._ran_arguments[call.id] = dict(call.arguments)
            self.view.render(
                [ToolStatus(call_id=call.id, status=status, detail=detail, title=running)]
            )
        if status == "running":
            self.view.render([Spinner(on=True, text=f"running {call.name}")])

    def full_output(self, call_id: str | None = None) -> str | None:
        """The uncapped output of a call (the last one when none is given); an uncut output is
        its result as shown."""
        if call_id is None and self._full_outputs:
            call_id = next(reversed(self._full_outputs))
        if call_id in self._full_outputs:
            return self._full_outputs[call_id]
        result = self.messages.tool_result(call_id)  # uncut: what the model got is all of it
        return None if result is None else result.content or ""

    def clear(self, new_id: str | None = None, then: Callable[[], None] | None = None) -> None:
        """Forget the conversation (system prompts stay); a running turn is stopped first.

        With `new_id` the chat goes on under that id: the saved history stays as it was.
        `then` runs once the chat is cleared.
        """
        if self.busy and self._task is not None:
            # The stopped turn still stores its partial answer: clear once it has ended.
            self._task.add_done_callback(lambda _task: self._clear_now(new_id, then))
            self.stop()
            return
        self._clear_now(new_id, then)

    def _clear_now(self, new_id: str | None = None, then: Callable[[], None] | None = None) -> None:
        if new_id is not None and new_id != self.id:
            self.save_now()
            self.id = new_id
            self._full_outputs.clear()
        self.messages.clear()
        self.context.cleared()
        self.title = None
        self.save()
        self.view.render([Replace(lines=[transcript.USER_HEADER, "", ""])])
        if then is not None:
            then()
        self.fire("ChatCleared")

    def _sync_system_prompts(self) -> None:
        """Insert each offered tool's and group's system prompt once, after the main prompt."""
        for tag, text in self.tools.system_prompts():
            if not any(m.tag == tag for m in self.messages):
                position = sum(1 for m in self.messages if m.role == "system")
                self.messages.insert_system(text, tag, position)


def _too_long(exc: AdapterError) -> bool:
    """True for a provider's refusal of a request longer than the model's window."""
    return isinstance(exc, ContextTooLong) or (
        isinstance(exc, ProviderError) and is_context_overflow(str(exc))
    )


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")
