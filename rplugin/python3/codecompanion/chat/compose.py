"""The user's message as the model reads it: tool mentions, context, and what was typed."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..context.images import read_image
from ..context.sources import ContextItem, with_context
from ..messages import MENTION, Message

TITLE_LIMIT = 60


class MentionTools(Protocol):
    """What composing a message needs of the chat's tools: `@{tool}` mentions read."""

    def parse_user_message(self, text: str) -> str:
        """The text with its mentions handled (the tools they name offered)."""
        ...


def compose(tools: MentionTools, text: str, context: list[ContextItem]) -> Message:
    """The user message for `text`: mentions offer tools, context follows; the typed text and
    a summary of the context are kept for a restored chat."""
    images = [
        read_image(Path(item.source or item.path), item.path)
        for item in context
        if item.kind == "image"
    ]
    blocks = [item for item in context if item.kind != "image"]
    content = with_context(tools.parse_user_message(text), blocks)
    message = Message(role="user", content=content)
    if content != text:  # a restored chat shows what was typed, not what the model read
        message.extra["typed"] = text
    if context:
        message.extra["context"] = [item.summary() for item in context]
    if images:  # sent as the provider's image parts (see context/images.py)
        message.extra["images"] = [image.to_dict() for image in images]
    return message


def unknown_mentions(tools: object, text: str) -> str | None:
    """One line naming each `@{name}` that is neither a tool nor a group (it is sent as typed)."""
    registry = getattr(tools, "registry", None)
    if registry is None:
        return None
    unknown = [
        name
        for name in dict.fromkeys(MENTION.findall(text))
        if registry.get(name) is None and registry.group(name) is None
    ]
    if not unknown:
        return None
    listed = ", ".join(f"@{{{name}}}" for name in unknown)
    known = ", ".join(registry.group_names() + registry.names())
    return f"unknown tool {listed} (sent as typed); available: {known}"


def first_line(text: str) -> str:
    """A chat's title: the first non-empty line of its first message, cut to TITLE_LIMIT."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"
