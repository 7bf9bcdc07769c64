"""`/fetch <url>`: a web page as context for the next message, read by the fetch_webpage tool.

The user typed the URL, so it is not asked about again; everything else is the tool's own rules
(a redirect to another site is asked, the body and the text are capped, time limited).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import ToolCall
from ..tools.builtin import fetch_webpage
from .sources import ContextItem

if TYPE_CHECKING:
    from ..tools.runtime.system import ToolSystem


async def fetch_context(tools: ToolSystem, url: str) -> ContextItem:
    """The page at `url` as a context item; a ToolError with one clear line when it fails."""
    entry = tools.registry.get("fetch_webpage")
    # The registry's tool carries its opts already (defaults, the config's, `opts["tools"]`).
    base = entry.tool if entry is not None else fetch_webpage.TOOL
    call = ToolCall(id="slash-fetch", name="fetch_webpage", arguments={"url": url})
    reply = await fetch_webpage.run(tools.question_context(call, base.opts), {"url": url})
    fetched = str(reply.data.get("url") or url)
    # The tool's answer is a header line and a fenced block: the item keeps the block's text.
    lines = reply.for_llm.splitlines()
    body = lines[2:-1] if len(lines) >= 3 and lines[1].startswith("```") else lines
    return ContextItem(
        kind="web page",
        path=fetched,
        filetype="markdown",
        lines=tuple(body),
        numbered=False,
    )
