"""Vendor fetch: each run reads every service's vendor source, politely.

Conditional requests (If-None-Match, If-Modified-Since) with the validators
the store kept; a 304 re-reads the stored body. A source that is down, slow,
too large or not in the expected shape is marked with its outcome and its
last good view is kept (until it goes stale, see ``merge``); nothing here
ever breaks the run. The store keeps a source's public URL (``public_url``),
never the values of the variables it names.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx

from statusgen.config import Config, ServiceConfig, VendorConfig
from statusgen.config.secrets import public_url
from statusgen.errors import StatusgenError, VendorParseError
from statusgen.jsonout import dump
from statusgen.model import DESCRIPTIONS, Outcome
from statusgen.neterrors import Network, RedirectGuard
from statusgen.text import one_line
from statusgen.vendors import VendorView, fetch_source, kumapair, parse_vendor, read_local
from statusgen.vendors.fetch import FetchResult, pinned_transport
from statusgen.vendors.model import VendorObservation, VendorRow

log = logging.getLogger("statusgen.vendors")

DETAIL_LIMIT = 300


def _parse(body: bytes | None, source: VendorConfig) -> VendorView | None:
    if body is None:
        return None
    fmt = None if source.format == "auto" else source.format
    return parse_vendor(body, fmt, list(source.components) or None, ZoneInfo(source.timezone))


def _safe_detail(text: str) -> str:
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    return cleaned[:DETAIL_LIMIT]


def _last_view(prev: VendorRow, source: VendorConfig) -> VendorView | None:
    try:
        return _parse(prev.body, source)
    except VendorParseError:
        return None


def settle(
    prev: VendorRow, source: VendorConfig, got: FetchResult, now: datetime
) -> tuple[VendorRow, VendorObservation]:
    """The stored row and the observation after one fetch. Pure but for parsing."""
    row = replace(prev, fetched_at=now, outcome=got.outcome.value, detail=None)
    if got.outcome is not Outcome.OK:
        return row, VendorObservation(_last_view(prev, source), got.outcome, prev.last_ok_at)
    body = prev.body if got.not_modified else got.body
    try:
        view = _parse(body, source)
    except VendorParseError as exc:
        detail = _safe_detail(str(exc))
        row = replace(row, outcome=Outcome.PARSE.value, detail=detail)
        return row, VendorObservation(_last_view(prev, source), Outcome.PARSE, prev.last_ok_at, detail)
    if view is None:  # a 304 with nothing stored: ask again without validators next time
        row = replace(row, etag=None, last_modified=None, outcome=Outcome.PARSE.value, detail="no body kept")
        return row, VendorObservation(None, Outcome.PARSE, prev.last_ok_at, "no body kept")
    row = replace(
        row,
        body=body,
        etag=got.etag or prev.etag,
        last_modified=got.last_modified or prev.last_modified,
        last_ok_at=now,
        view_json=dump(view.to_json()).decode(),
    )
    return row, VendorObservation(view, Outcome.OK, now)


async def _fetch(
    client: httpx.AsyncClient, prev: VendorRow, source: VendorConfig, max_bytes: int, guard: RedirectGuard
) -> FetchResult:
    if source.url.startswith(("http://", "https://")):

        async def get(url: str, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
            return await fetch_source(
                client,
                url,
                etag=etag,
                last_modified=last_modified,
                timeout=source.timeout,
                max_bytes=max_bytes,
                headers=source.headers,
                guard=guard,
            )

        got = await get(source.url, prev.etag, prev.last_modified)
        return await kumapair.complete(got, prev.body, source.url, source.format, get)
    try:
        body = await asyncio.to_thread(read_local, source.url, max_bytes=max_bytes)
    except StatusgenError:
        return FetchResult(Outcome.ERROR, None, None, None, None, False, 0.0)
    return FetchResult(Outcome.OK, None, body, None, None, False, 0.0)


async def fetch_vendors(
    config: Config,
    previous: dict[str, VendorRow],
    clock: Callable[[], datetime],
    internal: Collection[Network] | None = None,
) -> dict[str, tuple[VendorRow, VendorObservation]]:
    """Fetch every vendor source of the configuration concurrently. A redirect from a public
    address to an internal one is refused unless ``site.allow_private_targets``; ``internal``
    names the internal networks instead of every address that is not globally routable
    (``neterrors.is_public``)."""
    sourced = [s for s in config.services if s.vendor is not None]
    if not sourced:
        return {}
    guard = RedirectGuard(config.site.allow_private_targets, internal)
    headers = {"User-Agent": config.site.user_agent, "Accept": "application/json, application/atom+xml, */*"}
    async with httpx.AsyncClient(headers=headers, max_redirects=5, transport=pinned_transport()) as client:

        async def one(svc: ServiceConfig) -> tuple[str, tuple[VendorRow, VendorObservation]]:
            assert svc.vendor is not None
            prev, url = previous.get(svc.slug), public_url(svc.vendor.url)
            if prev is None or prev.url != url:
                prev = VendorRow(svc.slug, url)
            got = await _fetch(client, prev, svc.vendor, config.site.max_bytes, guard)
            row, obs = settle(prev, svc.vendor, got, clock())
            _say_change(svc.slug, url, prev.outcome, obs)
            return svc.slug, (row, obs)

        return dict(await asyncio.gather(*(one(s) for s in sourced)))


def _say_change(slug: str, url: str, before: str | None, obs: VendorObservation) -> None:
    """A source that could not be read is logged once, when it starts failing (or fails
    otherwise), and once when it is read again: not at every run."""
    if obs.outcome.value == before:
        return
    if obs.outcome is not Outcome.OK:
        what = DESCRIPTIONS[obs.outcome] + (f" ({one_line(obs.detail)[:300]})" if obs.detail else "")
        log.warning("vendor source of %r (%s) could not be read: %s", slug, url, what)
    elif before is not None:
        log.info("vendor source of %r (%s) read again", slug, url)
