"""The render protocol: every operation Lua applies to a chat buffer, as a typed value.

Lua's half is `lua/codecompanion/render.lua`: a handler per kind in its `handlers` table and a
`codecompanion.op.<Name>` class per kind with the same fields (tests/nvim/test_render_protocol.py
keeps the two in step). An op crosses as `{"kind": KIND, **fields}`; an optional field left at
None is not sent. Which ops are progress, that may wait for the next frame, is said here by
each op's `paced()`; when they go is nvim/view.py's business.
"""

from __future__ import annotations

from dataclasses import field, fields
from typing import ClassVar, Literal

from .frozen import Frozen, value

Role = Literal["user", "llm"]
Level = Literal["info", "warn", "error"]

# Events that are progress (a request or a tool round under way, a checkpoint captured for
# it): paced like the text around them. Every other event goes out at once.
PACED_EVENTS = frozenset(
    {
        "Checkpoint",
        "RequestStarted",
        "RequestStreaming",
        "RequestFinished",
        "ToolsStarted",
        "ToolStarted",
        "ToolFinished",
        "ToolsFinished",
    }
)


@value
class RenderOp(Frozen):
    """One rendering operation for a chat buffer, applied in a batch by Lua."""

    KIND: ClassVar[str] = ""
    # Progress (streamed text, tool lines, the spinner) may wait for the next frame;
    # anything else goes out on the loop's next turn.
    PACED: ClassVar[bool] = False
    # A buffer variable or a header need not break a hold (a tool round's, a submission's): it
    # waits with the progress held, so Neovim is not written to while a request reaches the
    # provider.
    HELD: ClassVar[bool] = False

    @property
    def kind(self) -> str:
        """The op's kind: the key of its handler in render.lua."""
        return self.KIND

    def paced(self) -> bool:
        """True for progress, which may wait for the next frame."""
        return self.PACED

    def wire(self) -> dict[str, object]:
        """The op as Lua receives it: its kind and its fields (an unset optional one left out)."""
        out: dict[str, object] = {"kind": self.KIND}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None or f.default is not None:
                out[f.name] = value
        return out


@value
class Append(RenderOp):
    """Streamed answer text, appended where the buffer's text ends."""

    KIND = "append"
    PACED = True
    text: str


@value
class Block(RenderOp):
    """Text on a fresh line, after one blank line."""

    KIND = "block"
    PACED = True
    text: str


@value
class Header(RenderOp):
    """A turn's header (`## Me`, `## LLM (…)`) after a blank line."""

    KIND = "header"
    HELD = True  # a turn's `## LLM` waits with the submission's hold (nvim/view.py)
    role: Role
    text: str


@value
class Usage(RenderOp):
    """The turn's token count beside the answer's header."""

    KIND = "usage"
    PACED = True
    text: str


@value
class Meter(RenderOp):
    """The context meter: tokens the next request sends of the model's window, the last
    request's input and output, the chat's cost (when the price is known), as one line."""

    KIND = "meter"
    PACED = True
    text: str
    tokens: int
    window: int | None = None
    last_input: int | None = None
    last_output: int | None = None
    cost: float | None = None


@value
class Tool(RenderOp):
    """A tool call's line, with its status icon."""

    KIND = "tool"
    PACED = True
    call_id: str
    title: str
    status: str | None = None
    detail: str | None = None


@value
class ToolStatus(RenderOp):
    """A tool call's new status (and its title, when the arguments that run changed)."""

    KIND = "tool_status"
    call_id: str
    status: str
    detail: str | None = None
    title: str | None = None

    def paced(self) -> bool:
        """Progress, except a question waiting for the user: it shows at once."""
        return self.status != "awaiting_approval"


@value
class ToolOutput(RenderOp):
    """A tool's result: the user's text, then (folded) what the model was sent, if different."""

    KIND = "tool_output"
    PACED = True
    call_id: str
    text: str
    detail: str | None = None


@value
class Context(RenderOp):
    """Context sent with a message: one folded line over the lines the model read."""

    KIND = "context"
    title: str
    text: str | None = None


@value
class Lock(RenderOp):
    """The buffer is read-only from the end of this batch until `Ready`."""

    KIND = "lock"
    PACED = True


@value
class Replace(RenderOp):
    """The whole buffer (a cleared or restored chat)."""

    KIND = "replace"
    lines: list[str]
    # What the user typed under `## Me` comes back under the next `ready` (a demo chat's intro
    # arrives after the buffer is open, and may find a message being typed).
    keep_message: bool = False


@value
class Ready(RenderOp):
    """The turn ended: the user's header, and the buffer writable again."""

    KIND = "ready"
    text: str | None = None


@value
class Spinner(RenderOp):
    """The spinner at the end of the buffer, on (with its text) or off."""

    KIND = "spinner"
    PACED = True
    on: bool
    text: str | None = None


@value
class Notice(RenderOp):
    """One line in the message area, in order with the buffer's updates."""

    KIND = "notice"
    text: str
    level: Level = "info"


@value
class Event(RenderOp):
    """A `User CodeCompanion<name>` autocmd with its data, ordered with the renders around it."""

    KIND = "event"
    name: str
    data: dict[str, object] = field(default_factory=dict)

    def paced(self) -> bool:
        """Progress events (PACED_EVENTS) are paced with the text around them."""
        return self.name in PACED_EVENTS


@value
class SetVar(RenderOp):
    """A buffer variable (`b:<name>`) that Lua reads without asking the host."""

    KIND = "set_var"
    HELD = True
    name: str
    value: object


@value
class Plan(RenderOp):
    """An agent's plan as a checklist, drawn once and then rewritten in place (same
    `plan_id`); no lines remove it."""

    KIND = "plan"
    PACED = True
    plan_id: str
    lines: list[str]


# Every op kind, by name: what render.lua's handler table must match.
OPS: tuple[type[RenderOp], ...] = (
    Append,
    Block,
    Header,
    Usage,
    Meter,
    Tool,
    ToolStatus,
    ToolOutput,
    Context,
    Lock,
    Replace,
    Ready,
    Spinner,
    Notice,
    Event,
    SetVar,
    Plan,
)
KINDS: frozenset[str] = frozenset(op.KIND for op in OPS)
