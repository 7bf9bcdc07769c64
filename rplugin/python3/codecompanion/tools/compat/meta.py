"""What CodeCompanion's callbacks receive besides `self`: `tools` (or `meta`, with `meta.tools`),
its `chat` with `add_tool_output` and `add_message`, and the pieces of output a call collects.

Every attribute is read from the call's ToolContext or the call itself: nothing reaches through
to the tool system or the chat.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...ports import Editor, HunkDecision
from ..model.calling import as_text
from ..model.contract import QuestionKind, ToolContext
from .cmds import CallOutput

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox
    from ...sandbox.settings import Mode

log = logging.getLogger("codecompanion.tools")

_META_KEYS = ("tools", "cmd", "stdout", "stderr")


@dataclass
class Pieces:
    """What callbacks passed to `add_tool_output` for one call, until the call is answered."""

    call_id: str
    items: list[tuple[str, str | None]] = field(default_factory=list)
    closed: bool = False

    def add(self, for_llm: object, for_user: object = None) -> bool:
        """Keep one piece; False (and a log line) once the call has been answered."""
        if self.closed:
            log.warning("call %s: output added after the call was answered; ignored", self.call_id)
            return False
        self.items.append((as_text(for_llm), None if for_user is None else as_text(for_user)))
        return True

    def texts(self, default: tuple[str, str | None]) -> tuple[str, str | None]:
        """Close the pieces and join them (or give `default`): (for_llm, for_user)."""
        self.closed = True
        items = self.items or [default]
        for_llm = "\n\n".join(text for text, _ in items)
        for_user = None
        if any(user is not None for _, user in items):
            for_user = "\n\n".join(text if user is None else user for text, user in items)
        return for_llm, for_user


@dataclass(frozen=True)
class ToolFlags:
    """`chat.tool_registry.flags`: a command's `flag` name -> whether it succeeded."""

    flags: dict[str, bool]


class MetaChat:
    """`tools.chat` as callbacks see it: `id`, `add_tool_output`, `add_message`, and
    `tool_registry.flags`."""

    def __init__(self, ctx: ToolContext, pieces: Pieces) -> None:
        self._ctx = ctx
        self._pieces = pieces

    @property
    def id(self) -> str:
        """The chat's id."""
        return self._ctx.chat.id

    def add_tool_output(self, tool: object, for_llm: object, for_user: object = None) -> None:
        """Add text to the result of `tool`'s call (several pieces join with blank lines)."""
        pieces = getattr(tool, "pieces", None)
        if not isinstance(pieces, Pieces):
            call_id = tool if isinstance(tool, str) else getattr(tool, "id", None)  # a ToolCall
            pieces = self._pieces if call_id == self._pieces.call_id else None
        if pieces is None:
            log.warning("add_tool_output for a call that is not running (%r); ignored", tool)
            return
        pieces.add(for_llm, for_user)

    def add_message(
        self, message: Mapping[str, Any], opts: Mapping[str, Any] | None = None
    ) -> None:
        """Add a message for the model: `{"role": "user"|"llm"|"system", "content": ...}`.

        It joins the history after this batch's results (a message between a call and its
        result would break the request); it is shown unless `opts["visible"]` is false.
        """
        role = str(message.get("role") or "user")
        role = {"assistant": "llm"}.get(role, role)
        if role not in ("user", "llm", "system"):
            log.warning("add_message: unknown role %r; sent as a user message", role)
            role = "user"
        visible = bool((opts or {}).get("visible", True))
        content = message.get("content")
        text = content if isinstance(content, str) else as_text(content)
        self._ctx.chat.add_message(role, text, visible)

    @property
    def tool_registry(self) -> ToolFlags:
        """CodeCompanion's `chat.tool_registry`: here, where commands' `flag`s are kept."""
        return ToolFlags(self._ctx.chat.flags)


class Meta:
    """`tools` in the callback form, `meta` (and `meta.tools`) in today's: one object.

    `stdout` and `stderr` hold what this call's cmds produced so far; `cmd` is the cmd the
    callback is about; `meta["tools"]` and `meta.tools` are this object again.
    """

    def __init__(self, ctx: ToolContext, execution: CallOutput, pieces: Pieces) -> None:
        self._ctx = ctx
        self._execution = execution
        self.chat = MetaChat(ctx, pieces)
        self.cmd: object = None

    @property
    def tools(self) -> Meta:
        """This object: `meta.tools` in today's CodeCompanion form."""
        return self

    @property
    def cwd(self) -> Path:
        """The project root."""
        return self._ctx.root

    @property
    def chat_id(self) -> str:
        """The chat's id."""
        return self._ctx.chat.id

    @property
    def editor(self) -> Editor | None:
        """The editor (loaded buffers, diagnostics), or None outside Neovim."""
        return self._ctx.editor

    @property
    def mode(self) -> Mode:
        """The chat's permission mode."""
        return self._ctx.mode

    @property
    def yolo(self) -> bool:
        """True in YOLO mode."""
        return self._ctx.mode == "yolo"

    @property
    def sandbox(self) -> CommandSandbox | None:
        """The chat's command sandbox (None: commands run unconfined)."""
        return self._ctx.sandbox

    @property
    def stdout(self) -> list[Any]:
        """What this call's cmds gave so far, one entry per cmd (a command's is a list of lines)."""
        return list(self._execution.stdout)

    @property
    def stderr(self) -> list[Any]:
        """What the failing cmd of this call gave."""
        return list(self._execution.stderr)

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """Ask the user a yes/no question (through the chat's approval gate)."""
        return await self._ctx.asks.confirm(question, kind)

    async def review_diff(
        self, tool: object, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision | None:
        """The user's review of a change to `path`; None when the policy spares it."""
        return await self._ctx.asks.review(path, old, new, note)

    async def tls_context(self) -> ssl.SSLContext:
        """The TLS context the host's adapters trust."""
        return await self._ctx.tls()

    def cancel(self) -> None:
        """Stop the batch, as the user's stop does."""
        self._ctx.cancel()

    def with_cmd(self, cmd: object) -> Meta:
        """This object with `cmd` set (the cmd an output is about)."""
        self.cmd = cmd
        return self

    # Read as a table, as Lua code would: meta["tools"], meta.get("stdout").

    def __getitem__(self, key: str) -> object:
        if key in _META_KEYS:
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in _META_KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(_META_KEYS)

    def get(self, key: str, default: object = None) -> object:
        """`meta.get("tools")`, as a table read in Lua would."""
        return getattr(self, key) if key in _META_KEYS else default
