"""One vendor source read once, for ``statusgen vendor``: no store, no run."""

from __future__ import annotations

import asyncio

import httpx

from statusgen.config.secrets import public_url
from statusgen.errors import StatusgenError
from statusgen.model import Outcome
from statusgen.vendors import VendorView, fetch_source, kumapair, parse_vendor, read_local
from statusgen.vendors.fetch import FetchResult, pinned_transport


def read_vendor_source(
    source: str, fmt: str | None, components: list[str] | None, timeout: float, max_bytes: int = 5 * 1_048_576
) -> VendorView:
    """One source read once, for ``statusgen vendor``: a URL or a local file (an Uptime Kuma
    status-page URL brings its heartbeats along, see ``kumapair``)."""
    if source.startswith(("http://", "https://")):

        async def both() -> FetchResult:
            async with httpx.AsyncClient(max_redirects=5, transport=pinned_transport()) as client:

                async def get(url: str) -> FetchResult:
                    return await fetch_source(
                        client, url, etag=None, last_modified=None, timeout=timeout, max_bytes=max_bytes
                    )

                return await kumapair.complete(await get(source), None, source, fmt or "auto", get)

        got = asyncio.run(both())
        if got.outcome is not Outcome.OK or got.body is None:
            code = f" (HTTP {got.status_code})" if got.status_code else ""
            raise StatusgenError(f"{public_url(source)}: could not fetch: {got.outcome.value}{code}")
        body = got.body
    else:
        body = read_local(source, max_bytes=max_bytes)
    return parse_vendor(body, fmt, components)
