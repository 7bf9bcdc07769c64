"""Anthropic prompt caching: `cache_control` breakpoints on the stable prefix of a request.

Anthropic caches a request's prefix up to a block marked `cache_control` (tools, then system,
then messages, in that order) and reads it back at a tenth of the input price when the next
request starts the same way. A chat's requests do: the tools and the system prompt never
change, and each round only adds to the history. So the last tool, the last system block, the
last block of the history and the end of the turn before it are marked (at most four, the
API's limit): the next round reads everything up to its new messages from the cache.
"""

from __future__ import annotations

from typing import Any

MAX_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}


def mark(body: dict[str, Any], limit: int = MAX_BREAKPOINTS) -> int:
    """Mark up to `limit` breakpoints in a Messages body; returns how many were marked."""
    blocks = [*_last(body.get("tools")), *_last(body.get("system"))]
    messages = body.get("messages") or []
    ends = [
        m["content"][-1] for m in messages if isinstance(m.get("content"), list) and m["content"]
    ]
    if ends:
        blocks.append(ends[-1])
    if len(ends) >= 3:
        blocks.append(ends[-3])  # the previous round's end: still a hit if this one is not
    marked = 0
    for block in blocks[: max(0, min(limit, MAX_BREAKPOINTS))]:
        block["cache_control"] = dict(EPHEMERAL)
        marked += 1
    return marked


def _last(items: Any) -> list[dict[str, Any]]:
    return [items[-1]] if isinstance(items, list) and items and isinstance(items[-1], dict) else []
