"""The HTTP client of the web tools, on the host's TLS context (tls.py) like the adapters."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from ...model.contract import ToolContext


async def web_client(
    ctx: ToolContext, timeout: float, headers: Mapping[str, str] | None = None
) -> httpx.AsyncClient:
    """A client trusting what the host trusts; its context is built once per tool system.

    httpx's own default would load certifi (not the system store nor a company CA) into a new
    context for every client: tens of milliseconds on the event loop at each fetch.
    """
    context = await ctx.tls()
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout), headers=headers, verify=context)
