"""A chat's context, kept: its rules files in the system prompt, the budget before each request,
the meter on screen, and compaction on demand or after a provider's context error."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..adapters.base import ChatAdapter, Usage
from ..chat import transcript
from ..context.rules import TAG as RULES_TAG
from ..context.rules import Rules, RulesOptions, touched_paths
from ..messages import Message, MessageStore
from ..outside import Json
from ..ports import ChatView
from ..render_ops import Context, Spinner
from ..render_ops import Meter as MeterOp
from . import compact
from .manager import Budget, BudgetOptions, Meter

log = logging.getLogger("codecompanion.budget")
_TOKENS = re.compile(r"(\d[\d,]*) tokens")
# How long the meter after an answer with tool calls waits for the round's request to leave.
METER_HOLD = 0.05


class Kept(Protocol):
    """What the keeper needs of its chat."""

    adapter: ChatAdapter
    view: ChatView
    messages: MessageStore

    @property
    def tools(self) -> object:
        """The chat's tools: read for their schemas and hooks only, when they have them."""
        ...


class ContextKeeper:
    """One chat's rules, budget and meter."""

    def __init__(
        self,
        chat: Kept,
        budget: Budget | None = None,
        rules: Rules | None = None,
        summariser: ChatAdapter | None = None,
    ) -> None:
        self.chat = chat
        self.budget = budget or Budget()
        self.rules = rules
        self.summariser = summariser  # a cheaper adapter for summaries (None: the chat's own)
        self._rules_text = ""
        self._held: asyncio.TimerHandle | None = None  # a meter shown later (_hold_meter)
        self._trigger = "auto"  # what starts a compaction: "manual" while /compact runs
        # The meter of a chat that counts its own context (an external agent): drawn as it says.
        self.meter_source: Callable[[], MeterOp] | None = None

    def configure(self, context: Mapping[str, Any] | None, rules: Mapping[str, Any] | None) -> None:
        """New `opts["context"]` and `opts["rules"]` (a reload): the counts and the rules files
        turned off stay."""
        self.budget.options = BudgetOptions.from_opts(context)
        if self.rules is not None:
            self.rules.options = RulesOptions.from_opts(rules)
            self._rules_text = "\x00"  # loaded again (and shown) at the next request

    # ----- rules ------------------------------------------------------------------------

    def sync_rules(self) -> None:
        """Load the rules files (a change on disk, or a new subfolder worked in, shows now)."""
        if self.rules is None:
            return
        messages = self.chat.messages
        loaded = self.rules.load(touched_paths(messages))
        text = loaded.prompt()
        present = any(m.tag == RULES_TAG for m in messages)
        if text == self._rules_text and (present or not text):
            return
        self._rules_text = text
        if not text:
            messages.remove_where(RULES_TAG)
        else:
            # After the main system prompt: rules refine it, tool prompts follow.
            after = sum(1 for m in messages if m.tag == "system_prompt")
            messages.insert_system(text, RULES_TAG, after)
        line = loaded.line() if loaded.files else "Rules: none loaded"
        # One folded line naming the files; `zo` shows what the model reads.
        self.chat.view.render([Context(title=f"> {line}", text=text)])

    def rule_files(self) -> list[tuple[str, bool]]:
        """Every rules file found for the picker: (label, on)."""
        if self.rules is None:
            return []
        found = self.rules.candidates(touched_paths(self.chat.messages))
        return [(label, label not in self.rules.disabled) for _path, label, _folder in found]

    def toggle_rule(self, label: str) -> str:
        """Turn one rules file off or back on for this chat (from the next request); the line
        saying which now are on."""
        if self.rules is None:
            return "no rules files for this chat"
        self.rules.disabled.symmetric_difference_update({label})
        state = "off" if label in self.rules.disabled else "on"
        loaded = self.rules.load(touched_paths(self.chat.messages))
        return f"{label} {state} · " + (loaded.line() if loaded.files else "Rules: none loaded")

    def to_state(self) -> dict[str, Any]:
        """Saved with the chat: the budget's counts and the rules files turned off."""
        off = sorted(self.rules.disabled) if self.rules is not None else []
        return {**self.budget.to_state(), "rules_off": off}

    def restore_state(self, state: Json) -> None:
        """Take back a saved `to_state`."""
        if not isinstance(state, dict):
            return
        self.budget.restore_state(state)
        off = state.get("rules_off")
        if self.rules is not None and isinstance(off, list):
            self.rules.disabled = {str(label) for label in off}

    # ----- the budget around a request -------------------------------------------------------

    def outgoing(self) -> list[Message]:
        """What is sent: compacted messages left out, pruned results as stubs."""
        return self.budget.as_sent(list(self.chat.messages))

    async def before_request(self, force: bool = False, whole: bool = False) -> str | None:
        """Make room for the next request; None when it fits, else the line saying why not."""
        chat = self.chat
        window = await self.budget.window(chat.adapter)
        fit = getattr(chat.tools, "fit_window", None)
        if callable(fit):
            fit(window)  # a small window gets the short schemas, counted below as sent
        return await self.budget.make_room(
            chat.messages,
            self._schemas(),
            window,
            self._summarise,
            self._say,
            force=force,
            summary_budget=await self._summary_budget(),
            whole=whole,
        )

    async def _summary_budget(self) -> int:
        """Tokens of conversation the summariser reads: what its window leaves (≤ 16000)."""
        adapter = self.summariser or self.chat.adapter
        window = await self.budget.window(adapter)
        if not window:
            return 2000
        room = window - self.budget.reserve(window) - 400  # the prompt and the summary
        return max(500, min(16_000, int(room / max(self.budget.ledger.ratio, 0.25))))

    def sending(self) -> None:
        """The request is leaving: its estimate is what the provider's usage will correct, and
        the count a meter held back since an answer with tool calls shows."""
        tokens = self.budget.sending(list(self.chat.messages), self._schemas())
        if self._held is not None:
            self.show_meter(tokens)

    def answered(self, usage: Usage | None, message: Message | None) -> None:
        """The answer came: learn from its usage, note its counts, show the meter."""
        estimate = self.budget.ledger.last_estimate
        self.budget.observe(usage, self.chat.adapter, message)
        if message is not None and usage is not None:
            # Saved with the answer: what the provider counted, and what the meter expected.
            message.extra["usage"] = {
                "input": usage.prompt_tokens,
                "output": usage.completion_tokens,
                "estimate": estimate,
            }
        if message is not None and message.tool_calls:
            # Counting the whole history here would delay the tool round; the round's request
            # counts it moments later, while its answer is awaited.
            self._hold_meter()
        else:
            self.show_meter()

    def _hold_meter(self) -> None:
        """Show the meter when the next request leaves, or after `METER_HOLD` if none has (the
        round waits for the user, or ends the turn)."""
        if self._held is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.show_meter()
            return
        self._held = loop.call_later(METER_HOLD, self.show_meter)

    def refused(self, error: str) -> None:
        """The provider said the request was too long: the estimates were low; learn how low
        from the count the error names (or, without one, from the window)."""
        ledger = self.budget.ledger
        window = self.budget.known_window(self.chat.adapter) or 0
        named = [int(n.replace(",", "")) for n in _TOKENS.findall(error)]
        held = max([*named, window])
        if held and (ledger.last_estimate or 0) < held:
            ledger.refused(held)

    def cleared(self) -> None:
        """The chat was cleared: a new conversation, a new count (the learned ratio stays)."""
        messages = self.chat.messages
        for tag in {m.tag for m in messages if compact.is_summary(m) and m.tag}:
            messages.remove_where(tag)
        self.budget.ledger.forget()
        self.budget.cost = None
        self._rules_text = ""  # the rules message went with the history: show it again
        self.show_meter()

    def rewound(self) -> None:
        """The conversation was cut back to a turn (or a rewind undone): count it again (from
        the provider's last count, moved by the estimate of what went or came back)."""
        self.show_meter()

    async def opened(self) -> None:
        """The chat was opened (new or restored): its meter now, and again once the model's
        window is known (asked of the server at most once per model)."""
        self.show_meter()
        if self.budget.known_window(self.chat.adapter) is None:
            if await self.budget.window(self.chat.adapter) is not None:
                self.show_meter()

    async def compact_now(self) -> bool:
        """`/compact`: summarise the earlier conversation now, whatever the thresholds."""
        before = sum(1 for m in self.chat.messages if compact.is_summary(m))
        self._trigger = "manual"
        try:
            await self.before_request(force=True, whole=True)
        finally:
            self._trigger = "auto"
        self.show_meter()
        return sum(1 for m in self.chat.messages if compact.is_summary(m)) > before

    # ----- the meter ------------------------------------------------------------------------

    def meter(self) -> Meter:
        """The meter's values now."""
        return self.budget.meter(self.chat.adapter, list(self.chat.messages), self._schemas())

    def show_meter(self, tokens: int | None = None) -> None:
        """Send the meter to the chat's buffer (winbar and status); `tokens` when just counted."""
        if self.meter_source is not None:
            self.chat.view.render([self.meter_source()])
            return
        if self._held is not None:
            self._held.cancel()
            self._held = None
        if tokens is None:
            meter = self.meter()
        else:
            meter = self.budget.meter(self.chat.adapter, (), (), tokens)
        self.chat.view.render(
            [
                MeterOp(
                    text=meter.text(),
                    tokens=meter.tokens,
                    window=meter.window,
                    last_input=meter.last_input,
                    last_output=meter.last_output,
                    cost=meter.cost,
                )
            ]
        )

    # ----- helpers ----------------------------------------------------------------------------

    def _schemas(self) -> Sequence[dict[str, Any]]:
        schemas = getattr(self.chat.tools, "schemas", None)
        return list(schemas()) if callable(schemas) else []

    def _say(self, line: str) -> None:
        log.info("%s", line)
        self.chat.view.render([transcript.block(f"_[context: {line}]_")])
        self.chat.view.notify(line, "info")

    async def _summarise(self, text: str) -> str:
        from ..hooks.chat_hooks import hooks_of  # loaded by a chat's first compaction

        hooks = hooks_of(self.chat.tools)
        if hooks is not None:  # PreCompact: the hooks see it coming (a block is only said)
            await hooks.fire("PreCompact", {"trigger": self._trigger, "custom_instructions": ""})
        self.chat.view.render([Spinner(on=True, text="compacting")])
        try:
            return await compact.summarise(self.summariser or self.chat.adapter, text)
        finally:
            self.chat.view.render([Spinner(on=False)])
