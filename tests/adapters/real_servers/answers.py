"""What every real test server answers, whatever its framework (the Node one says the same)."""

from __future__ import annotations

import json

PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>501 Not Implemented</title></head>\n<body>"
    + b"<p>The server does not support the action requested by the browser.</p>\n" * 40
    + b"</body></html>\n"
)
MODELS = b'{"object":"list","data":[{"id":"model-a"},{"id":"model-b"}]}'


def question(body: bytes) -> str:
    """The last message's text in an OpenAI chat request."""
    content = json.loads(body)["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def events(body: bytes) -> list[bytes]:
    """The SSE events answering the request: "answer to <question>" in three pieces."""
    pieces = ["answer ", "to ", question(body)]
    out = [
        b"data: %s\n\n" % json.dumps({"choices": [{"index": 0, "delta": {"content": p}}]}).encode()
        for p in pieces
    ]
    out.append(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    out.append(b"data: [DONE]\n\n")
    return out
