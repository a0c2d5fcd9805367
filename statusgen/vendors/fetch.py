"""Fetch a vendor payload: conditional, capped, and never raising for the network.

The source's url and headers may name variables (``${TOKEN}``): they are
read when the request is made, and their values go nowhere but into it. The
body is read as ``neterrors.read_capped`` reads a check's (the cap holds on
the decoded bytes), and redirects are followed as a check's are
(``neterrors.opened``: none from a public address to an internal one).

``fetch_source`` is the one boundary where httpx exceptions become
``Outcome`` values::

    TimeoutException, asyncio timeout     -> timeout
    ConnectError caused by a DNS failure  -> dns
    ConnectError caused by TLS            -> tls
    ConnectError (other), ProxyError      -> connect
    TooManyRedirects                      -> redirects
    a redirect from public to internal    -> private_redirect
    ProtocolError, ReadError, WriteError,
    CloseError, DecodingError, a body
    that does not inflate                 -> protocol
    anything else httpx raises            -> error

``read_local`` reads a payload from a file for the CLI.
"""

from __future__ import annotations

import asyncio
import os
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

import httpx

from statusgen.config.secrets import expand
from statusgen.errors import StatusgenError
from statusgen.model import Outcome
from statusgen.neterrors import (
    ACCEPT_ENCODING,
    REFUSE_INSIDE,
    PinnedTransport,
    PrivateRedirect,
    RedirectGuard,
    opened,
    outcome_of,
    read_capped,
)

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
    """The decoded body, or None as soon as it grows past ``max_bytes``."""
    if _declared_too_large(response, max_bytes):
        return None
    return await read_capped(response, max_bytes)


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
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    timeout: float,
    max_bytes: int,
    guard: RedirectGuard,
    private: Sequence[str],
) -> FetchResult:
    request = client.build_request("GET", url, headers=headers, timeout=timeout)
    async with opened(client, request, guard, private) as response:
        return await _answer(response, headers, max_bytes)


def _request_headers(configured: Sequence[tuple[str, str]], conditional: dict[str, str]) -> dict[str, str]:
    """The headers of a fetch: only the encodings ``read_capped`` decodes, then the source's own
    (their variables read now), then the validators."""
    headers = {"Accept-Encoding": ACCEPT_ENCODING}
    headers.update((name, expand(value)) for name, value in configured)
    return {**headers, **conditional}


async def fetch_source(
    client: httpx.AsyncClient,
    url: str,
    *,
    etag: str | None,
    last_modified: str | None,
    timeout: float,
    max_bytes: int,
    headers: Sequence[tuple[str, str]] = (),
    guard: RedirectGuard = REFUSE_INSIDE,
) -> FetchResult:
    """GET ``url`` with ``headers`` within ``timeout`` seconds in all, reading at most ``max_bytes``
    decoded bytes; the variables ``url`` and ``headers`` name are read now (an unset one raises
    ``MissingSecret``).

    Redirects are followed (up to the client's ``max_redirects``), as ``guard`` allows. A 304
    answer is ``ok`` with ``not_modified`` and no body (the validators sent
    are kept unless the server sends new ones). Any other non-2xx answer is
    ``http_status`` with no body.
    """
    started = time.perf_counter()
    expanded, sent = expand(url), _request_headers(headers, _conditional(etag, last_modified))
    try:
        async with asyncio.timeout(timeout):
            result = await _get(client, expanded, sent, timeout, max_bytes, guard, [name for name, _ in headers])
    except (httpx.HTTPError, httpx.InvalidURL, TimeoutError, OSError, ValueError, PrivateRedirect, zlib.error) as exc:
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


def pinned_transport() -> httpx.AsyncBaseTransport:
    """httpx's own transport, pinned (``neterrors.PinnedTransport``): a redirect goes where it was
    checked. Proxies named in the environment are not used, as by the checks."""
    return PinnedTransport(httpx.AsyncHTTPTransport())
