"""Check one big JSON-RPC message from an MCP server and write it back with a tool's answer cut.

Run as a process of its own (`python -I bigline.py MAX_CHARS`, the message on stdin): parsing
tens of megabytes holds the interpreter for seconds, which in the host would freeze the chat.
The message is checked with the SDK's own `jsonrpc_message_adapter`; a tool answer's text is
cut to MAX_CHARS (with a note of how much was cut) so the host parses a bounded message. An
unreadable message exits 1 with one line on stderr saying why.
"""

from __future__ import annotations

import json
import sys
from typing import Any

# Room kept for the note saying how much was cut, so the host does not cut the answer again.
_NOTE_ROOM = 100


def cut_content(result: dict[str, Any], max_chars: int) -> None:
    """Cut a tool answer's text parts (counted as the host joins them) to `max_chars` in place."""
    content = result.get("content")
    if not isinstance(content, list):
        return
    if not content and result.get("structuredContent") is not None:
        shown = json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
        content = [{"type": "text", "text": shown}]
    budget = max_chars - _NOTE_ROOM
    cut = 0
    for item in content:
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text, str):
            continue
        kept = max(0, min(len(text), budget))
        cut += len(text) - kept
        item["text"] = text[:kept]
        budget -= kept + 1  # the newline the host puts between parts
    if cut:
        content.append({"type": "text", "text": f"[{cut:,} more characters of the answer cut]"})
    result["content"] = content
    if result.get("structuredContent") is not None:
        # Kept in shape (the SDK checks it against the tool's output schema), strings cut.
        result["structuredContent"] = _cut_strings(result["structuredContent"], [max_chars])


def _cut_strings(value: Any, budget: list[int]) -> Any:
    """`value` with its strings cut so that together they hold at most `budget[0]` characters."""
    if isinstance(value, str):
        kept = value[: max(0, budget[0])]
        budget[0] -= len(kept)
        return kept
    if isinstance(value, list):
        return [_cut_strings(item, budget) for item in value]
    if isinstance(value, dict):
        return {key: _cut_strings(item, budget) for key, item in value.items()}
    return value


def main() -> int:
    """Read the message on stdin, write it back (cut) on stdout; 1 and a reason if unreadable."""
    import mcp_types

    max_chars = int(sys.argv[1])
    data = sys.stdin.buffer.read()
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(data, by_name=False)
    except ValueError as exc:
        sys.stderr.write(" ".join(str(exc).split())[:300] + "\n")
        return 1
    if isinstance(message, mcp_types.JSONRPCResponse):
        cut_content(message.result, max_chars)
    sys.stdout.write(message.model_dump_json(by_alias=True, exclude_unset=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
