"""Content blocks both ways: what the agent sends shown as text, and the user's message with
its context as the prompt's blocks."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from ..context.sources import ContextItem

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def block_text(block: Any) -> str:
    """One content block as the chat shows it (media and links as one short line)."""
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ImageContentBlock):
        return f"[image {block.mime_type}]"
    if isinstance(block, AudioContentBlock):
        return f"[audio {block.mime_type}]"
    if isinstance(block, ResourceContentBlock):
        return f"[{block.title or block.name}]({block.uri})"
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return f"\n```\n{resource.text}\n```\n"
        if isinstance(resource, BlobResourceContents):
            return f"[{resource.uri}]"
    return ""


def prompt_blocks(text: str, context: list[ContextItem], embedded: bool) -> list[Block]:
    """The user's text and its context items as prompt blocks: files as embedded resources
    when the agent takes them, else as text; images as images."""
    blocks: list[Block] = [TextContentBlock(type="text", text=text)]
    for item in context:
        blocks.append(_context_block(item, embedded))
    return blocks


def _context_block(item: ContextItem, embedded: bool) -> Block:
    """An image as an image (OSError when it cannot be read), a file as a resource."""
    if item.kind == "image":
        source = Path(item.source or item.path)
        data = base64.b64encode(source.read_bytes()).decode("ascii")
        mime = mimetypes.guess_type(source.name)[0] or "image/png"
        return ImageContentBlock(type="image", data=data, mime_type=mime)
    text = "\n".join(item.lines)
    if embedded and item.path and not item.path.startswith(("[", "#")):
        uri = Path(item.path).resolve().as_uri()
        resource = TextResourceContents(uri=uri, text=text, mime_type=None)
        return EmbeddedResourceContentBlock(type="resource", resource=resource)
    return TextContentBlock(type="text", text=f"<context name={item.path!r}>\n{text}\n</context>")
