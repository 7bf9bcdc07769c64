"""The chat session: one conversation's messages, view, saving, checkpoints and context, and
the one recorder of tool results; a turn driver (`driver.py`) produces its turns."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..adapters.base import ChatAdapter
from ..adapters.secret_mask import mask, masked_item, masked_result
from ..budget.keeper import ContextKeeper
from ..context.sources import ContextItem, context_ops
from ..messages import Message, MessageStore, Role, Status, ToolCall, ToolResult
from ..outside import Json
from ..persistence.history import ChatStore
from ..ports import ChatView
from ..render_ops import Lock, Ready, Replace, SetVar, Spinner, Tool, ToolStatus
from . import transcript
from .compose import first_line
from .driver import TurnDriver, TurnStatus
from .model_loop import ModelLoop

if TYPE_CHECKING:
    from ..checkpoints import ChatCheckpoints
    from ..tools.runtime.system import ToolSystem

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


class Chat:
    """One chat buffer's session: its messages, adapter, tool system and turn driver."""

    def __init__(
        self,
        *,
        chat_id: str,
        adapter: ChatAdapter,
        view: ChatView,
        tool_factory: Callable[[Chat], ToolSystem],
        store: ChatStore | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        messages: MessageStore | None = None,
        driver: Callable[[Chat], TurnDriver] = ModelLoop,
    ) -> None:
        """`driver` builds what produces the turns: the model loop unless told otherwise."""
        self.id = chat_id
        self.adapter = adapter
        self.view = view
        self.store = store
        self.messages = messages or MessageStore()
        self.tools = tool_factory(self)
        self.title: str | None = None
        self.updated = _now()  # the time of the last message: what the Restore picker shows
        self._task: asyncio.Task[None] | None = None
        self._full_outputs: dict[str, str] = {}
        self._ran_arguments: dict[str, dict[str, Any]] = {}  # call id -> what it runs with
        self._save_pending = False
        self.context = ContextKeeper(self)  # rules files, the token budget, the meter
        # Captures of the project around turns and tool rounds (the host sets it; tests may not).
        self.checkpoints: ChatCheckpoints | None = None
        # Every secret the host knows (workspace.py sets its KeyResolver's): masked in tool
        # results and context before they are shown, saved or sent (adapters/secret_mask.py).
        self.secrets: set[str] = set()
        if system_prompt and not any(m.tag == "system_prompt" for m in self.messages):
            self.messages.insert_system(system_prompt, "system_prompt", 0)
        self.driver: TurnDriver = driver(self)

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

    def fire(self, name: str, **extra: Json) -> None:
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
            **({"driver": driven} if (driven := self.driver.to_state()) else {}),
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
        if text.strip() == "/compact" and self.driver.compacts:  # a command, not a question
            return self.compact()
        context = [masked_item(item, self.secrets) for item in context or []]
        message = self.driver.message(text, context)
        if message is None:
            return False
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
            await self.context.compact_now()  # it says what it did, or why it did nothing
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
        """One turn: the driver produces it; whatever happens, the turn ends here."""
        status: TurnStatus = "success"
        try:
            status = await self.driver.turn()
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
            if status != "success":  # a stopped or failed turn got no answer to count: count now
                self.context.show_meter()
            await self._turn_summary()
            self.view.render([Spinner(on=False), Ready(text=transcript.USER_HEADER)])
            # The answer's last text is on screen before the (fsynced) save.
            self.view.flush()
            self.save_now()
            if status == "cancelled":
                self.fire("ChatStopped")
            self.fire("ChatDone", status=status)

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

    def _answer_pending(self, status: Status) -> None:
        """Give every call still without a result one (stop or crash mid-tools)."""
        for call in self.messages.pending_calls():
            self.record_tool_result(call, ToolResult(status, f"The tool call was {status}."))

    def stop(self) -> bool:
        """Cancel the request and running tools; every pending call gets a result."""
        if not self.busy or self._task is None:
            return False
        self.driver.cancel()
        self._task.cancel()
        return True

    # ----- the tool system's view of the chat (ToolChat) ---------------------------------

    def record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Store one call's result (through the store's one recorder) and show it: how the tool
        system's results, a repeated call's and a call a stop or crash left without one arrive."""
        result = masked_result(result, self.secrets)
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
        content = mask(content, self.secrets)
        self.add(Message(role=kind, content=content, visible=visible))
        if visible:
            self.view.render([transcript.block(content)])

    def tool_status(self, call: ToolCall, status: str, detail: str = "") -> None:
        """Show a call's status on its line (the line appears with the first status)."""
        if status == "pending":
            title = transcript.tool_title(call)
            self.view.render([Tool(call_id=call.id, title=title, status=status)])
        else:
            # The arguments that run: edited ones (by the user, a hook) replace the model's.
            shown = status in ("running", "awaiting_approval")
            running = transcript.tool_title(call) if shown else None
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


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")
