"""fetch_webpage: one http(s) page as readable text (HTML as Markdown), capped."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from ...errors import ToolError
from ...transport.bounded_body import ACCEPT_ENCODING, UnsupportedEncoding, read_capped
from ..model.arguments import arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, time_limits, timed_out
from ..runtime.protocol import cap_output
from ._support.html_text import html_to_markdown
from ._support.text_files import fence, looks_binary

if TYPE_CHECKING:  # httpx loads when a page is fetched, not with the tool list
    import httpx


def approval_key(args: dict[str, Any]) -> str:
    """What an "always" approval remembers: the exact URL."""
    return str(args.get("url"))


NAME = "fetch_webpage"

DEFAULT_OPTS: dict[str, Any] = {
    # A URL can carry data out of the project, so each fetch is approved by default.
    "requires_approval": True,
    "approval_key": approval_key,
    "timeout": 20_000,  # milliseconds, as CodeCompanion gives timeouts
    "max_bytes": 3_000_000,  # of the body after decompression
    "max_chars": 40_000,
}

DESCRIPTION = (
    "Fetch a web page (http or https) and return its text; HTML is converted to Markdown-like "
    "text. Long pages are cut. The user approves each URL, and again any redirect to another "
    "site."
)

PROPERTIES = {"url": {"type": "string", "description": "The full URL, starting with http(s)://."}}

_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "csv")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HEADERS = {
    "User-Agent": "codecompanion-fetch/1.0",
    "Accept": "text/html,text/*;q=0.9,*/*;q=0.5",
    "Accept-Encoding": ACCEPT_ENCODING,
}
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class Page:
    """What the server sent back (the body possibly cut at the byte limit)."""

    url: str
    status: int
    content_type: str
    body: bytes
    encoding: str
    cut: bool


def _check_url(url: str) -> str:
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ToolError(f"Only http:// and https:// URLs can be fetched (got {url!r}).")
    return url


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


def same_site(approved: tuple[str, str, int | None], url: str) -> bool:
    """True for the approved origin, or the same host moved from http to https."""
    origin = _origin(url)
    if origin == approved:
        return True
    upgrade = (("http", approved[1], 80), ("https", approved[1], 443))
    return (approved, origin) == upgrade


async def _fetch_one(client: httpx.AsyncClient, url: str, max_bytes: int) -> Page | str:
    """One request: the page, or the URL a redirect points to (not followed here)."""
    async with client.stream("GET", url) as response:
        location = response.headers.get("location")
        if response.is_redirect and location:
            return str(urljoin(url, location.strip()))
        try:
            body, cut = await read_capped(response, max_bytes)
        except UnsupportedEncoding as exc:
            raise ToolError(f"Could not read {url}: {exc}.") from None
        return Page(
            str(response.url),
            response.status_code,
            response.headers.get("content-type", "").lower(),
            body,
            response.charset_encoding or "utf-8",
            cut,
        )


async def _download(ctx: ToolContext, url: str, own: float, max_bytes: int) -> Page:
    """The page at `url`, following redirects within the approved site; a redirect to another
    site is followed only if the user approves that site too."""
    from ._support.web_client import web_client

    approved = {_origin(url)}
    current = url
    async with await web_client(ctx, own, _HEADERS) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            # httpx's timeout is per operation; wait_for bounds each whole request.
            found = await asyncio.wait_for(_fetch_one(client, current, max_bytes), own)
            if isinstance(found, Page):
                return found
            target = _check_url(found)
            if not any(same_site(origin, target) for origin in approved):
                question = f"{current} redirects to another site: {target}. Fetch it?"
                if not await ctx.confirm(question, "redirect"):
                    raise ToolError(
                        f"{current} redirected to {target}, another site, and the user did not "
                        "approve fetching it; nothing from there was read."
                    )
                approved.add(_origin(target))
            current = target
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times; nothing was read.")


def _as_text(page: Page) -> str:
    """The body as text: HTML converted, other text as is; ToolError for binary content."""
    kind = page.content_type.split(";")[0].strip()
    if kind and not any(mark in kind for mark in _TEXTUAL) or looks_binary(page.body):
        raise ToolError(f"{page.url} is not a text page (content type {kind or 'unknown'}).")
    try:
        text = page.body.decode(page.encoding, errors="replace")
    except LookupError:
        text = page.body.decode("utf-8", errors="replace")
    if "html" in kind or (not kind and "<html" in text[:1000].lower()):
        text = html_to_markdown(text)
    return text.strip()


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Fetch the page; every failure (network, status, timeout) is a clear error."""
    url = _check_url(arg_text(args, "url"))
    timeout, own = time_limits(ctx.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    max_bytes = int(ctx.opts.get("max_bytes") or DEFAULT_OPTS["max_bytes"])
    import httpx

    try:
        page = await _download(ctx, url, own, max_bytes)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise timed_out(NAME, f"Fetching {url} timed out (limit {timeout:g}s).") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Could not fetch {url}: {type(exc).__name__}: {exc}") from None
    if page.status >= 400:
        raise ToolError(f"{page.url} answered HTTP {page.status}; no content was returned.")
    text = await asyncio.to_thread(_as_text, page)
    limit = int(ctx.opts.get("max_chars") or DEFAULT_OPTS["max_chars"])
    text, cut = cap_output(text, limit)
    notes = " (cut to fit)" if cut or page.cut else ""
    header = f"Content of {page.url} ({page.content_type or 'no content type'}){notes}:"
    return FunctionOutput(
        f"{header}\n{fence(text, 'markdown')}",
        f"Fetched `{page.url}`",
        {"url": page.url, "status": page.status, "chars": len(text)},
    )


TOOL = function_tool(
    NAME,
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=lambda ctx, args: f"Fetch the web page {args.get('url')}?",
    opts=DEFAULT_OPTS,
)
