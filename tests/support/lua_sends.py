"""What Lua sends the host, read from the Lua sources: the notifications and requests named."""

from __future__ import annotations

import re


def sent(src: str) -> tuple[set[str], set[str]]:
    """The notifications and the requests Lua source `src` sends to the host."""
    host = r'(?:\bhost|require\("codecompanion\.host"\)|\bM)'
    notes = set(re.findall(host + r'\.notify\(\s*"(\w+)"', src))
    notes |= set(re.findall(r'\bsend\([^,]+,\s*"(\w+)"', src))  # chat.lua's send(bufnr, method)
    notes |= set(re.findall(r'rpcnotify,?\s*\(?\s*[\w.]+,\s*"codecompanion",\s*"(\w+)"', src))
    requests = set(re.findall(host + r'\.request(?:_async)?\(\s*"(\w+)"', src))
    return notes, requests
