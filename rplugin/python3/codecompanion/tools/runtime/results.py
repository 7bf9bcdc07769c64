"""One call's result: the pieces its callbacks add, the default texts, and the capped final text."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["success", "error", "rejected", "cancelled", "timeout"]
FINAL_STATUSES: tuple[Status, ...] = ("success", "error", "rejected", "cancelled", "timeout")

log = logging.getLogger("codecompanion.tools")


@dataclass(frozen=True)
class CallResult:
    """The one answer a call gets: status, text for the model, text for the user."""

    status: Status
    for_llm: str
    for_user: str | None = None
    full_output: str | None = None
    detail: str = ""

    @property
    def is_error(self) -> bool:
        """Anything but success is an error for the provider."""
        return self.status != "success"


@dataclass
class OutputBuffer:
    """What callbacks passed to `add_tool_output` for one call, until the call is answered."""

    call_id: str
    pieces: list[tuple[str, str | None]] = field(default_factory=list)
    closed: bool = False

    def add(self, for_llm: Any, for_user: Any = None) -> bool:
        """Keep one piece; False (and a log line) once the call has been answered."""
        if self.closed:
            log.warning("call %s: output added after the call was answered; ignored", self.call_id)
            return False
        self.pieces.append((as_text(for_llm), None if for_user is None else as_text(for_user)))
        return True

    def result(
        self, status: Status, default: tuple[str, str | None], notes: list[str], limit: int
    ) -> CallResult:
        """Close the buffer and combine its pieces (or the default) into the call's result."""
        self.closed = True
        pieces = self.pieces or [default]
        for_llm = "\n\n".join(text for text, _ in pieces).strip() or "(no output)"
        if notes:
            for_llm = "\n".join(notes) + "\n\n" + for_llm
        for_user = None
        if any(user is not None for _, user in pieces):
            for_user = "\n\n".join(text if user is None else user for text, user in pieces)
        return capped(CallResult(status, for_llm, for_user), limit)


def capped(result: CallResult, limit: int) -> CallResult:
    """The result with both texts cut to `limit` characters; the uncut text kept as full_output."""
    from .process import cap_output

    for_llm, cut = cap_output(result.for_llm, limit)
    for_user = result.for_user
    if for_user is not None:
        for_user, _ = cap_output(for_user, limit)
    full = result.for_llm if cut else result.full_output
    return CallResult(result.status, for_llm, for_user, full, result.detail)


def as_text(value: Any) -> str:
    """Data as text for the model: strings as they are, lists line by line, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return str(value)


def joined(values: list[Any]) -> str:
    """Several cmds' data as one text."""
    texts = (as_text(value).rstrip("\n") for value in values)
    return "\n".join(text for text in texts if text)


def default_output(
    status: Status, name: str, data: list[Any], errors: list[Any], reason: str | None = None
) -> tuple[str, str | None]:
    """The (for_llm, for_user) text used when the tool's own output callback added nothing."""
    output = joined(data)
    if status == "success":
        return (output or f"The {name} tool ran and produced no output.", None)
    if status in ("error", "timeout"):
        text = f"The {name} tool failed:\n{joined(errors) or 'no error message'}"
        if output:
            text += f"\n\nOutput before the failure:\n{output}"
        return (text, None)
    if status == "rejected":
        text = f"The user rejected the {name} tool call."
        if reason:
            text += f' Their reason: "{reason}"'
        return (text, f"Rejected `{name}`" + (f": {reason}" if reason else ""))
    text = f"The user cancelled the {name} tool call; it did not finish."
    if output:
        text += f"\n\nOutput before the cancel:\n{output}"
    return (text, f"Cancelled `{name}`")
