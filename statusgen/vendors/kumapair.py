"""Uptime Kuma's second URL: derive it, fetch it, bundle the two answers as one payload.

An Uptime Kuma page is two endpoints. The configured URL is the status page's
(``https://<host>/api/status-page/<slug>``: groups, monitors, the pinned
incident, maintenance); the heartbeat URL is derived from it by putting
``heartbeat/`` before the slug (``/api/status-page/heartbeat/<slug>``), on
the same host, with the same headers and timeout. Both answers become one
body, ``{"status_page": ..., "heartbeat": ...}``, which the store keeps and
``uptimekuma.parse`` reads.

Only the status page is asked conditionally: on a 304 its kept part is reused.
The beats are asked afresh every time, since they change with every check
Uptime Kuma makes. A URL that is not of that form (or a local file) is read
alone, and its monitors are unknown.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import orjson

from statusgen.model import Outcome
from statusgen.vendors.fetch import FetchResult
from statusgen.vendors.uptimekuma import BUNDLE_KEYS

_STATUS_PAGE_URL = re.compile(r"(?P<base>https?://[^?#]*/api/status-page/)(?P<slug>[^/?#]+)/?(?P<rest>[?#].*)?")
FORMATS = ("auto", "uptimekuma")


def heartbeat_url(url: str) -> str | None:
    """The heartbeat endpoint of a status-page URL, or None when ``url`` is not one."""
    match = _STATUS_PAGE_URL.fullmatch(url)
    if match is None or match["slug"] == "heartbeat":
        return None
    return f"{match['base']}heartbeat/{match['slug']}{match['rest'] or ''}"


def _decoded(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def is_status_page(body: bytes) -> bool:
    """Whether ``body`` is an Uptime Kuma status-page payload read alone (not yet bundled)."""
    value = _decoded(body)
    return isinstance(value, dict) and "publicGroupList" in value


def page_of(kept: bytes | None) -> bytes | None:
    """The status-page part of a kept bundle, or None when ``kept`` is not a bundle."""
    value = None if kept is None else _decoded(kept)
    if not isinstance(value, dict) or set(value) != set(BUNDLE_KEYS):
        return None
    return orjson.dumps(value[BUNDLE_KEYS[0]])


def bundle(page: bytes, beats: bytes) -> bytes | None:
    """The two answers as one payload; None when the beats are not JSON."""
    beats_value = _decoded(beats)
    if beats_value is None:
        return None
    return orjson.dumps({BUNDLE_KEYS[0]: orjson.loads(page), BUNDLE_KEYS[1]: beats_value})


async def complete(
    got: FetchResult, kept: bytes | None, url: str, fmt: str, get: Callable[[str], Awaitable[FetchResult]]
) -> FetchResult:
    """``got`` with the heartbeats joined, when it is an Uptime Kuma status page; else ``got``.

    ``kept`` is the body the store kept (a 304 reuses its status-page part); ``get`` fetches
    the heartbeat URL. A failed heartbeat fetch is the source's outcome for this run; beats
    that are not JSON are passed on alone, so the parse names what is wrong with them.
    """
    page = page_of(kept) if got.not_modified else got.body
    beats_url = heartbeat_url(url)
    if got.outcome is not Outcome.OK or fmt not in FORMATS or beats_url is None or page is None:
        return got
    if not is_status_page(page):
        return got
    beats = await get(beats_url)
    elapsed = round(got.elapsed_ms + beats.elapsed_ms, 3)
    if beats.outcome is not Outcome.OK or beats.body is None:
        return replace(beats, outcome=beats.outcome if beats.outcome is not Outcome.OK else Outcome.ERROR)
    body = bundle(page, beats.body) or beats.body
    return replace(got, body=body, not_modified=False, elapsed_ms=elapsed)
