"""web_search: search the web through Tavily (API key in TAVILY_API_KEY)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import ToolError
from ...transport.bounded_body import ACCEPT_ENCODING, UnsupportedEncoding, read_capped
from ..model.arguments import arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, time_limits, timed_out
from ..runtime.protocol import cap_output

if TYPE_CHECKING:  # httpx loads when a page is fetched, not with the tool list
    import httpx

MAX_ANSWER_BYTES = 5_000_000  # decompressed; a search answer is a few kilobytes

NAME = "web_search"

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "url": "https://api.tavily.com/search",
    "api_key_env": "TAVILY_API_KEY",
    "max_results": 5,
    "search_depth": "basic",
    "topic": "general",
    "timeout": 20_000,  # milliseconds, as CodeCompanion gives timeouts
    "max_chars_per_result": 3000,
}

DESCRIPTION = (
    "Search the web and get the most relevant pages (title, URL and an extract). Use for "
    "current information or documentation not in the project. domains limits the search to "
    "those sites (null or [] for the whole web)."
)

PROPERTIES = {
    "query": {"type": "string", "description": "What to search for."},
    "domains": {
        "type": ["array", "null"],
        "items": {"type": "string"},
        "description": 'Only search these domains, e.g. ["docs.python.org"].',
    },
}


def _domains(args: dict[str, Any]) -> list[str]:
    value = args.get("domains")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        raise ToolError("`domains` must be a list of domain names or null.")
    return [d.strip() for d in value if d.strip()]


def _api_key(opts: Mapping[str, Any]) -> str:
    key = opts.get("api_key") or os.environ.get(str(opts.get("api_key_env") or "TAVILY_API_KEY"))
    if not key:
        raise ToolError(
            "web_search needs a Tavily API key: set the TAVILY_API_KEY environment variable "
            "(or the tool's api_key option). The search was not run."
        )
    return str(key)


async def _post(
    ctx: ToolContext, opts: Mapping[str, Any], key: str, body: dict[str, Any]
) -> dict[str, Any]:
    timeout, own = time_limits(opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    url = str(opts.get("url") or DEFAULT_OPTS["url"])
    headers = {"Authorization": f"Bearer {key}", "Accept-Encoding": ACCEPT_ENCODING}
    import httpx

    from ._support.web_client import web_client

    try:
        async with await web_client(ctx, own) as client:
            status, raw, cut = await asyncio.wait_for(_send(client, url, body, headers), own)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise timed_out(NAME, f"The web search timed out (limit {timeout:g}s).") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"The web search failed: {type(exc).__name__}: {exc}") from None
    except UnsupportedEncoding as exc:
        raise ToolError(f"The web search failed: {exc}.") from None
    if status in (401, 403):
        raise ToolError(f"Tavily refused the API key (HTTP {status}).")
    if status >= 400:
        # The service may quote the request back: the key never reaches the model.
        # Masked before the cut, so a key spanning the cut leaves no prefix behind.
        text = raw[: 300 + len(key.encode())].decode("utf-8", "replace").replace(key, "***")[:300]
        raise ToolError(f"Tavily answered HTTP {status}: {text}")
    if cut:
        raise ToolError(f"Tavily's answer was larger than {MAX_ANSWER_BYTES:,} bytes.")
    try:
        data = json.loads(raw)
    except ValueError:
        raise ToolError("Tavily's answer was not JSON.") from None
    if not isinstance(data, dict):
        raise ToolError("Tavily's answer had an unexpected shape.")
    return data


async def _send(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, bytes, bool]:
    """Status, the body (decompressed in bounded steps, capped) and whether it was cut."""
    async with client.stream("POST", url, json=body, headers=headers) as response:
        raw, cut = await read_capped(response, MAX_ANSWER_BYTES)
        return response.status_code, raw, cut


def _render(results: list[Any], per_result: int) -> list[str]:
    blocks = []
    for index, item in enumerate(results, 1):
        if not isinstance(item, dict):
            continue
        title = str(item.get("title") or "(no title)")
        content, _cut = cap_output(str(item.get("content") or "").strip(), per_result)
        blocks.append(f"[{index}] {title}\n{item.get('url', '')}\n{content}")
    return blocks


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Run the search and list the results."""
    query = arg_text(args, "query").strip()
    if not query:
        raise ToolError("`query` is empty.")
    domains = _domains(args)
    opts = ctx.opts
    body = {
        "query": query,
        "max_results": int(opts.get("max_results") or DEFAULT_OPTS["max_results"]),
        "search_depth": opts.get("search_depth") or DEFAULT_OPTS["search_depth"],
        "topic": opts.get("topic") or DEFAULT_OPTS["topic"],
        "include_domains": domains,
        "include_answer": False,
        "include_raw_content": False,
    }
    data = await _post(ctx, opts, _api_key(opts), body)
    results = data.get("results") if isinstance(data.get("results"), list) else []
    per_result = int(opts.get("max_chars_per_result") or DEFAULT_OPTS["max_chars_per_result"])
    blocks = _render(results or [], per_result)
    if not blocks:
        return FunctionOutput(f"No web results for `{query}`.", f"No web results for `{query}`", {})
    text = f"{len(blocks)} web results for `{query}`:\n\n" + "\n\n".join(blocks)
    return FunctionOutput(text, f"Searched the web for `{query}`: {len(blocks)} results", {})


TOOL = function_tool(NAME, DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
