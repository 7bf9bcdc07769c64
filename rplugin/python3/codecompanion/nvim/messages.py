"""What Lua sends the host: one frozen value per notification and request, decoded once.

Each class names its message (`NAME`, as Lua's `host.notify(NAME, …)` sends it) and its fields,
the same names as the LuaCATS class `codecompanion.msg.<NAME>` in `lua/codecompanion/messages.lua`
(`tests/nvim/test_message_protocol.py` holds the two sides together). `decode` turns the table
msgpack gave into the value: a missing field (or Lua's `vim.NIL`) takes its default, a number
where a string is expected becomes its text, anything else of the wrong type is refused in one
line (`BadMessage`). Fields that carry a payload through unread (a context list, a picked value,
`setup()`'s options) are typed `object` or a `Mapping` of it: their own readers check them.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, field, fields
from typing import ClassVar, TypeVar, Union

from ..frozen import Frozen, keyword_value


class BadMessage(ValueError):
    """A message whose field has a value of the wrong type (or a required one is missing)."""


@keyword_value
class Message(Frozen):
    """A message from Lua; subclasses name it (`NAME`) and add its fields."""

    NAME: ClassVar[str] = ""


@keyword_value
class ChatMessage(Message):
    """A message about one chat, named by its id (an unknown id gets one line from the host)."""

    id: str = ""


# ----- the host ------------------------------------------------------------------------


@keyword_value
class Hello(Message):
    """The host's channel is open: setup()'s options (`config.for_python()`)."""

    NAME: ClassVar[str] = "hello"
    channel: int | None = None
    options: Mapping[str, object] = field(default_factory=dict)


@keyword_value
class Request(Message):
    """A question Lua waits on: `method` with `args`, answered by `host.reply(rid, value)`."""

    NAME: ClassVar[str] = "request"
    rid: int = 0
    method: str = ""
    args: Mapping[str, object] = field(default_factory=dict)


@keyword_value
class Reload(Message):
    """`:CodeCompanion reload`: read the config file again."""

    NAME: ClassVar[str] = "reload"


@keyword_value
class Follow(Message):
    """Follow mode turned on or off."""

    NAME: ClassVar[str] = "follow"
    on: bool = False


@keyword_value
class Buffers(Message):
    """The files loaded in buffers now, and whether a language server has attached to one."""

    NAME: ClassVar[str] = "buffers"
    paths: tuple[str, ...] = ()
    servers: bool = False


@keyword_value
class FileSaved(Message):
    """Neovim wrote a file: its size and modification time."""

    NAME: ClassVar[str] = "file_saved"
    path: str
    size: int
    sec: int
    nsec: int


@keyword_value
class Checks(Message):
    """`:CodeCompanionChat Checks` in the folder `cwd`."""

    NAME: ClassVar[str] = "checks"
    cwd: str | None = None


@keyword_value
class PickRestore(Message):
    """`:CodeCompanionChat Restore`: pick a saved chat."""

    NAME: ClassVar[str] = "pick_restore"


@keyword_value
class PickAgentSession(Message):
    """`:CodeCompanionChat Resume`: an agent's earlier session (the agent named, or the last
    chat's)."""

    NAME: ClassVar[str] = "pick_agent_session"
    adapter: str | None = None
    id: str | None = None
    cwd: str | None = None


@keyword_value
class ApprovalReply(Message):
    """The user's answer to an approval question `rid`."""

    NAME: ClassVar[str] = "approval_reply"
    rid: int = 0
    choice: str = "cancel"
    reason: str | None = None
    edited: str | None = None

    def answer(self) -> dict[str, str | None]:
        """What the approver reads (`approver.py`): the choice, a reason, the edited text."""
        return {"choice": self.choice, "reason": self.reason, "edited": self.edited}


@keyword_value
class EditorReply(Message):
    """Lua's answer to the host's request `rid`: any value the request's reader checks."""

    NAME: ClassVar[str] = "editor_reply"
    rid: int = 0
    value: object = None


# ----- one chat ------------------------------------------------------------------------


@keyword_value
class ChatNew(ChatMessage):
    """Open a chat for buffer `bufnr`: new, restored from disk, or reattached after a restart."""

    NAME: ClassVar[str] = "chat_new"
    bufnr: int
    cwd: str | None = None
    adapter: str | None = None
    model: str | None = None
    restore: bool = False
    reattach: bool = False
    session: str | None = None
    yolo: bool = False


@keyword_value
class ChatOpened(ChatMessage):
    """The chat's buffer was shown again."""

    NAME: ClassVar[str] = "chat_opened"


@keyword_value
class ChatClose(ChatMessage):
    """The chat's buffer was wiped."""

    NAME: ClassVar[str] = "chat_close"


@keyword_value
class ChatClear(ChatMessage):
    """Clear the chat (under `new_id` from now on, when given)."""

    NAME: ClassVar[str] = "chat_clear"
    new_id: str | None = None


@keyword_value
class ChatSubmit(ChatMessage):
    """The text under `## Me` and its context items (`context/sources.py` reads them)."""

    NAME: ClassVar[str] = "chat_submit"
    text: str = ""
    context: object = None


@keyword_value
class ChatRegenerate(ChatMessage):
    """Ask for the last answer again."""

    NAME: ClassVar[str] = "chat_regenerate"


@keyword_value
class ChatCompact(ChatMessage):
    """`/compact`: summarise the earlier conversation now."""

    NAME: ClassVar[str] = "chat_compact"


@keyword_value
class ChatStop(ChatMessage):
    """Stop what the chat runs (`quiet`: say nothing when nothing runs)."""

    NAME: ClassVar[str] = "chat_stop"
    quiet: bool = False


@keyword_value
class ChatYolo(ChatMessage):
    """Turn YOLO on or off."""

    NAME: ClassVar[str] = "chat_yolo"


@keyword_value
class ChatForgetApprovals(ChatMessage):
    """Forget the "always" approvals, YOLO off."""

    NAME: ClassVar[str] = "chat_forget_approvals"


@keyword_value
class ChatMode(ChatMessage):
    """The permission mode: a name, or "next"."""

    NAME: ClassVar[str] = "chat_mode"
    mode: str = "next"


@keyword_value
class ChatPickAdapter(ChatMessage):
    """Pick the chat's adapter and model."""

    NAME: ClassVar[str] = "chat_pick_adapter"


@keyword_value
class ChatRules(ChatMessage):
    """`/rules`: turn a rules file off or on."""

    NAME: ClassVar[str] = "chat_rules"


@keyword_value
class ChatSkills(ChatMessage):
    """`/skills`: turn a skill off or on."""

    NAME: ClassVar[str] = "chat_skills"


@keyword_value
class ChatFullOutput(ChatMessage):
    """A tool's whole output (the call under the cursor)."""

    NAME: ClassVar[str] = "chat_full_output"
    call_id: str | None = None


@keyword_value
class SlashFetch(ChatMessage):
    """`/fetch`: a page for the message being written in buffer `bufnr`."""

    NAME: ClassVar[str] = "slash_fetch"
    bufnr: int | None = None
    url: str = ""


@keyword_value
class ChatAgentMode(ChatMessage):
    """The external agent's mode, picked."""

    NAME: ClassVar[str] = "chat_agent_mode"
    mode: str = ""


@keyword_value
class ChatAgentOption(ChatMessage):
    """One of the external agent's options, picked (its value a choice's id or a switch)."""

    NAME: ClassVar[str] = "chat_agent_option"
    option: str = ""
    value: str | bool | None = None


@keyword_value
class ChatPickRewind(ChatMessage):
    """Pick a turn to rewind to."""

    NAME: ClassVar[str] = "chat_pick_rewind"


@keyword_value
class ChatRewind(ChatMessage):
    """Rewind to just before `turn`: the code, the conversation, or both."""

    NAME: ClassVar[str] = "chat_rewind"
    turn: int = 1
    code: bool = True
    conversation: bool = True


@keyword_value
class ChatRewindUndo(ChatMessage):
    """Undo the last rewind or revert."""

    NAME: ClassVar[str] = "chat_rewind_undo"


@keyword_value
class ChatReview(ChatMessage):
    """The files the chat changed since `since_turn` (all of them when unset)."""

    NAME: ClassVar[str] = "chat_review"
    since_turn: int | None = None


@keyword_value
class ChatReviewRevert(ChatMessage):
    """Revert one file of the review (one hunk when `hunk`, counted from 0)."""

    NAME: ClassVar[str] = "chat_review_revert"
    since_turn: int | None = None
    path: str = ""
    hunk: int | None = None


# ----- requests ------------------------------------------------------------------------


@keyword_value
class CompletionItems(Message):
    """Request: the `@{…}` items, adapter names and models completion offers."""

    NAME: ClassVar[str] = "completion_items"


@keyword_value
class Health(Message):
    """Request: `:checkhealth`'s report for the folder `cwd`."""

    NAME: ClassVar[str] = "health"
    cwd: str | None = None


@keyword_value
class Changes(ChatMessage):
    """Request: what `changes()` returns (the chat's changed files since `since_turn`)."""

    NAME: ClassVar[str] = "changes"
    since_turn: int | None = None


M = TypeVar("M", bound=Message)


def decode(kind: type[M], args: Mapping[str, object]) -> M:
    """The message `kind` from the table Lua sent (see the module's docstring)."""
    hints = typing.get_type_hints(kind)
    values: dict[str, object] = {}
    for one in fields(kind):
        raw = args.get(one.name)
        if raw is None:
            if one.default is MISSING and one.default_factory is MISSING:
                raise BadMessage(f"{kind.NAME}: {one.name} is missing")
            continue
        values[one.name] = _conform(kind.NAME, one.name, hints[one.name], raw)
    return kind(**values)


def _conform(message: str, name: str, hint: object, raw: object) -> object:
    """`raw` as a value of type `hint`, or BadMessage."""
    accepted = typing.get_args(hint) if _is_union(hint) else (hint,)
    for kind in accepted:
        value = _as(kind, raw)
        if value is not _NO:
            return value
    raise BadMessage(f"{message}: {name} is {type(raw).__name__}, not {_name(hint)}")


_NO = object()


def _as(kind: object, raw: object) -> object:
    """`raw` as a `kind`, or _NO."""
    if kind is object:
        return raw
    reader = _READERS.get(kind) or _READERS.get(typing.get_origin(kind))
    return reader(raw) if reader is not None else _NO


def _as_bool(raw: object) -> object:
    return raw if isinstance(raw, bool) else _NO


def _as_int(raw: object) -> object:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else _NO


def _as_str(raw: object) -> object:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return str(raw)
    return raw if isinstance(raw, str) else _NO


def _as_strings(raw: object) -> object:
    if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
        return tuple(raw)
    return _NO


def _as_table(raw: object) -> object:
    if isinstance(raw, dict):
        return types.MappingProxyType(raw)
    if isinstance(raw, list) and not raw:
        return types.MappingProxyType({})  # an empty Lua table may come as a list
    return _NO


_READERS: Mapping[object, Callable[[object], object]] = types.MappingProxyType(
    {
        bool: _as_bool,
        int: _as_int,
        str: _as_str,
        tuple: _as_strings,  # tuple[str, ...]: the only tuple a message holds
        Mapping: _as_table,
    }
)


def _is_union(hint: object) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _name(hint: object) -> str:
    return " or ".join(
        getattr(kind, "__name__", str(kind))
        for kind in (typing.get_args(hint) if _is_union(hint) else (hint,))
    )


def _all(base: type[Message]) -> list[type[Message]]:
    found: list[type[Message]] = []
    for sub in base.__subclasses__():
        if sub.NAME:
            found.append(sub)
        found += _all(sub)
    return found


REQUESTS: tuple[type[Message], ...] = (CompletionItems, Health, Changes)
NOTIFICATIONS: tuple[type[Message], ...] = tuple(
    kind for kind in _all(Message) if kind not in REQUESTS
)
