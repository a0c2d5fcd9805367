"""Exceptions into outcomes: the one place where httpx and OS errors become our words.

Both the probe and the vendor fetch call ``outcome_of``; nothing past them
sees an exception string.
"""

from __future__ import annotations

import socket
import ssl

import httpx

from statusgen.model import Outcome

CHAIN_LIMIT = 16
DNS_WORDS = (
    "name or service not known",
    "getaddrinfo",
    "nodename nor servname",
    "temporary failure in name resolution",
    "no address associated",
)


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < CHAIN_LIMIT:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _looks_like_dns(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, socket.gaierror) or any(w in text for w in DNS_WORDS)


def _connect_outcome(exc: BaseException) -> Outcome:
    chain = _causes(exc)
    if any(_looks_like_dns(e) for e in chain):
        return Outcome.DNS
    if any(isinstance(e, ssl.SSLError) or "certificate" in str(e).lower() or "[ssl" in str(e).lower() for e in chain):
        return Outcome.TLS
    return Outcome.CONNECT


_OUTCOMES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Outcome], ...] = (
    ((httpx.TimeoutException, TimeoutError), Outcome.TIMEOUT),
    (httpx.TooManyRedirects, Outcome.REDIRECTS),
    (httpx.ProxyError, Outcome.CONNECT),
    (
        (
            httpx.ProtocolError,
            httpx.ReadError,
            httpx.WriteError,
            httpx.CloseError,
            httpx.DecodingError,
        ),
        Outcome.PROTOCOL,
    ),
)


def outcome_of(exc: BaseException) -> Outcome:
    """Our word for what went wrong, from an exception httpx (or the OS) raised."""
    if isinstance(exc, (httpx.ConnectError, ConnectionError, socket.gaierror, ssl.SSLError)):
        return _connect_outcome(exc)
    for kinds, outcome in _OUTCOMES:
        if isinstance(exc, kinds):
            return outcome
    return Outcome.ERROR
