"""Fetch a vendor payload: conditional, capped, and never raising for the network.

``fetch_source`` is the one boundary where httpx exceptions become
``Outcome`` values::

    TimeoutException, asyncio timeout     -> timeout
    ConnectError caused by a DNS failure  -> dns
    ConnectError caused by TLS            -> tls
    ConnectError (other), ProxyError      -> connect
    TooManyRedirects                      -> redirects
    ProtocolError, ReadError, WriteError,
    CloseError, DecodingError             -> protocol
    anything else httpx raises            -> error

``read_local`` reads a payload from a file for the CLI.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

import httpx

from statusgen.errors import StatusgenError
from statusgen.model import Outcome
from statusgen.neterrors import outcome_of

HEADER_LIMIT = 512


@dataclass(frozen=True)
class FetchResult:
    """What one fetch of a vendor source gave."""

    outcome: Outcome
    status_code: int | None
    body: bytes | None
    etag: str | None
    last_modified: str | None
    not_modified: bool
    elapsed_ms: float


def _failed(outcome: Outcome, status_code: int | None = None) -> FetchResult:
    return FetchResult(outcome, status_code, None, None, None, False, 0.0)


def _conditional(etag: str | None, last_modified: str | None) -> dict[str, str]:
    headers = {"If-None-Match": etag, "If-Modified-Since": last_modified}
    return {name: value for name, value in headers.items() if value}


def _header(response: httpx.Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value if value and len(value) <= HEADER_LIMIT else None


def _declared_too_large(response: httpx.Response, max_bytes: int) -> bool:
    length = response.headers.get("content-length", "")
    return length.isdigit() and int(length) > max_bytes


async def _read_capped(response: httpx.Response, max_bytes: int) -> bytes | None:
    """The body, or None as soon as it grows past ``max_bytes``."""
    if _declared_too_large(response, max_bytes):
        return None
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            return None
    return bytes(body)


async def _answer(response: httpx.Response, sent: dict[str, str], max_bytes: int) -> FetchResult:
    code = response.status_code
    if code == 304:
        etag = _header(response, "etag") or sent.get("If-None-Match")
        modified = _header(response, "last-modified") or sent.get("If-Modified-Since")
        return FetchResult(Outcome.OK, code, None, etag, modified, True, 0.0)
    if not 200 <= code < 300:
        return _failed(Outcome.HTTP_STATUS, code)
    body = await _read_capped(response, max_bytes)
    if body is None:
        return _failed(Outcome.TOO_LARGE, code)
    etag, modified = _header(response, "etag"), _header(response, "last-modified")
    return FetchResult(Outcome.OK, code, body, etag, modified, False, 0.0)


async def _get(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], timeout: float, max_bytes: int
) -> FetchResult:
    request = client.stream("GET", url, headers=headers, timeout=timeout, follow_redirects=True)
    async with request as response:
        return await _answer(response, headers, max_bytes)


async def fetch_source(
    client: httpx.AsyncClient,
    url: str,
    *,
    etag: str | None,
    last_modified: str | None,
    timeout: float,
    max_bytes: int,
) -> FetchResult:
    """GET ``url`` within ``timeout`` seconds in all, reading at most ``max_bytes``.

    Redirects are followed (up to the client's ``max_redirects``). A 304
    answer is ``ok`` with ``not_modified`` and no body (the validators sent
    are kept unless the server sends new ones). Any other non-2xx answer is
    ``http_status`` with no body.
    """
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            result = await _get(client, url, _conditional(etag, last_modified), timeout, max_bytes)
    except (httpx.HTTPError, httpx.InvalidURL, TimeoutError, OSError, ValueError) as exc:
        result = _failed(outcome_of(exc))
    return replace(result, elapsed_ms=round((time.perf_counter() - started) * 1000, 3))


# -- local files ------------------------------------------------------------


def _local_path(location: str | os.PathLike[str]) -> Path:
    text = os.fspath(location)
    if not text.startswith("file:"):
        return Path(text)
    parts = urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise StatusgenError(f"cannot read {text}: only local file:// URLs are supported")
    return Path(url2pathname(unquote(parts.path)))


def read_local(location: str | os.PathLike[str], *, max_bytes: int | None = None) -> bytes:
    """The bytes of a local payload, given as a path or a ``file://`` URL."""
    path = _local_path(location)
    try:
        with path.open("rb") as handle:
            data = handle.read(-1 if max_bytes is None else max_bytes + 1)
    except OSError as exc:
        raise StatusgenError(f"cannot read vendor file {path}: {exc.strerror or exc}") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise StatusgenError(f"vendor file {path} is larger than {max_bytes} bytes")
    return data
