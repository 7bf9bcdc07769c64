"""How HTTP failures read: a provider's error object, retry waits and transport errors."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from ..errors import AdapterError, ProviderError, StreamInterrupted
from ..transport.http_types import (
    ConnectTimedOut,
    HeaderLookup,
    HTTPFailure,
    NotHTTP,
    PeerBroke,
    TimedOut,
)
from .base import AdapterSettings


def error_text(data: Any) -> str:
    """The human part of a provider's error object, whatever its shape."""
    if isinstance(data, list) and data:
        return error_text(data[0])
    if isinstance(data, dict):
        for key in ("error", "message", "detail", "msg"):
            value = data.get(key)
            if value:
                return error_text(value)
        return json.dumps(data)[:200]
    return str(data)


# How providers say a request is longer than the model's window (llama.cpp, OpenAI, Anthropic,
# Gemini, Ollama, vLLM, Mistral word it differently).
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens"
    r"|input is too long|exceeds? the (model's )?max|token limit|input length",
    re.IGNORECASE,
)


def is_context_overflow(text: str) -> bool:
    """True when an error text says the request does not fit the model's context window."""
    return bool(_CONTEXT_OVERFLOW.search(text))


def one_line(text: str, limit: int = 200) -> str:
    """Whitespace collapsed and cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_TITLE = re.compile(r"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_UNSEEN = re.compile(r"<(head|script|style)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>?")


def page_text(text: str, content_type: str = "", status: int = 0) -> str:
    """An HTML (or XML) error page as one line: its title when that names the status (as
    "502 Bad Gateway" does), else its first words; other text unchanged."""
    if "html" not in content_type.lower() and not text.lstrip().startswith("<"):
        return text
    import html  # only for a page: most errors are JSON

    found = _TITLE.search(text)
    title = " ".join(found.group(1).split()) if found else ""
    words = " ".join(_TAG.sub(" ", _UNSEEN.sub(" ", text)).split())
    if title and (str(status) in title or not words):
        words = title
    return one_line(html.unescape(words), 120)


def retry_after_seconds(value: str) -> float:
    """A Retry-After header's wait: seconds, or an HTTP date."""
    try:
        return float(value)
    except ValueError:
        import email.utils  # only for the rare date form

        when = email.utils.parsedate_to_datetime(value)
        return when.timestamp() - time.time()


def retry_delay(headers: HeaderLookup, attempt: int, backoff: float, max_wait: float) -> float:
    """Seconds to wait before retry `attempt`: what the provider asks, else exponential backoff."""
    wait: float | None = None
    millis, seconds = headers.get("retry-after-ms"), headers.get("retry-after")
    try:
        if millis is not None:
            wait = float(millis) / 1000
        elif seconds is not None:
            wait = retry_after_seconds(seconds)
    except (ValueError, TypeError):
        wait = None
    if wait is None:
        wait = backoff * 2**attempt
    return max(0.0, min(wait, max_wait))


def transport_error(
    exc: HTTPFailure, label: str, settings: AdapterSettings, base_url: str, streaming: bool
) -> AdapterError:
    """One line for a connection that failed, timed out or dropped."""
    if isinstance(exc, ConnectTimedOut):
        return StreamInterrupted(
            f"{label}: connecting timed out after {settings.connect_timeout:g} s"
        )
    if isinstance(exc, TimedOut):
        return StreamInterrupted(
            f"{label} sent nothing for {settings.read_timeout:g} s: the answer stopped "
            "(raise read_timeout for slow models)"
        )
    if isinstance(exc, NotHTTP):
        detail = one_line(str(exc), 120)
        if streaming:
            return StreamInterrupted(
                f"{label}: the answer broke off: not valid HTTP/1.1 ({detail})"
            )
        return ProviderError(f"{label} sent a response that is not valid HTTP/1.1 ({detail})")
    if streaming or isinstance(exc, PeerBroke):
        return StreamInterrupted(f"{label}: the connection dropped mid-answer")
    return AdapterError(f"{label}: cannot connect to {base_url}: {one_line(str(exc))}")
