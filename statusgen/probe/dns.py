"""A DNS check: resolve ``dns://name?type=A`` with dnspython, optionally expecting a value, timed.

The question goes to the system's resolvers (``/etc/resolv.conf``) or to the check's
``resolver``; the name is asked as it is, never completed with the search domains. The
latency runs from sending the question to having the answer. The server is the operator's
own choice and nothing redirects a DNS check, so ``site.allow_private_targets`` has nothing to
refuse here.

dnspython's exceptions become our outcomes here, once (as httpx's do in ``neterrors``): the
name does not exist (``no_such_name``), it has no record of the type (``no_records``), no
answer within the timeout (``timeout``), no server would answer (``dns``); an answer without
the expected value is ``wrong_answer``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import time
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import dns.asyncresolver
import dns.exception
import dns.resolver

from statusgen.model import CheckResult, Outcome
from statusgen.probe.check import CheckTarget
from statusgen.timeutil import utcnow

DNS_PORT = 53

_OUTCOMES: tuple[tuple[type[BaseException], Outcome], ...] = (
    (dns.resolver.NXDOMAIN, Outcome.NO_SUCH_NAME),
    (dns.resolver.NoAnswer, Outcome.NO_RECORDS),
    (dns.exception.Timeout, Outcome.TIMEOUT),
    (TimeoutError, Outcome.TIMEOUT),
    (dns.resolver.NoNameservers, Outcome.DNS),
    (dns.resolver.NoResolverConfiguration, Outcome.DNS),  # no system resolver to ask
)


def outcome_of(exc: BaseException) -> Outcome:
    """Our word for what went wrong, from an exception dnspython (or the OS) raised."""
    return next((outcome for kind, outcome in _OUTCOMES if isinstance(exc, kind)), Outcome.ERROR)


def server(resolver: str) -> tuple[str, int]:
    """A configured resolver (``10.0.0.2``, ``127.0.0.1:5353``, ``[::1]:53``) as (address, port)."""
    try:
        return str(ipaddress.ip_address(resolver)), DNS_PORT
    except ValueError:
        parts = urlsplit(f"//{resolver}")
        return str(parts.hostname), parts.port or DNS_PORT


SYSTEM_CONF = "/etc/resolv.conf"


def resolver_for(named: str | None, conf: str = SYSTEM_CONF) -> dns.asyncresolver.Resolver:
    """The resolver of a check: its named server, or the system's as ``conf`` says now. A
    ``--loop`` process lives for months: an edited (or replaced) ``conf`` is read again."""
    return _resolver(named, conf, _stamp(conf) if named is None else None)


def _stamp(conf: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(conf)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _resolver(named: str | None, conf: str, stamp: tuple[int, int, int] | None) -> dns.asyncresolver.Resolver:
    """A resolver per server (and per version of the system's configuration), made once."""
    if named is None:
        return dns.asyncresolver.Resolver(filename=conf)
    resolver = dns.asyncresolver.Resolver(configure=False)
    resolver.nameservers, resolver.port = [server(named)[0]], server(named)[1]
    return resolver


def value_of(rdata: Any) -> str:
    """A record as ``expect`` is compared with it: an address, a host name, or a TXT record's text."""
    if hasattr(rdata, "address"):
        return str(ipaddress.ip_address(rdata.address))
    if hasattr(rdata, "strings"):
        return b"".join(rdata.strings).decode("utf-8", errors="replace")
    name = rdata.exchange if hasattr(rdata, "exchange") else rdata.target
    return str(name.to_text(omit_final_dot=True)).lower()


def expected(expect: str, record_type: str) -> str:
    """An expected value in the form ``value_of`` gives: an address in its usual form, a TXT
    record's text as it is, a host name in lower case without a final dot."""
    if record_type in ("A", "AAAA"):
        try:
            return str(ipaddress.ip_address(expect))
        except ValueError:
            return expect
    return expect if record_type == "TXT" else expect.lower().rstrip(".")


async def probe_dns(target: CheckTarget, clock: Callable[[], datetime] = utcnow) -> CheckResult:
    """One DNS check, within its timeout; every failure becomes an outcome."""
    check = target.check
    name = str(urlsplit(check.url).hostname)
    sent = clock()
    try:
        resolver = resolver_for(check.resolver)
        async with asyncio.timeout(check.timeout):
            start = time.perf_counter()
            answer = await resolver.resolve(name, check.dns_type, search=False, lifetime=check.timeout)
            elapsed_ms = (time.perf_counter() - start) * 1000.0
    except Exception as exc:
        return CheckResult(target.service, target.check_index, sent, outcome_of(exc), None, None, False)
    found = check.expect is None or expected(check.expect, check.dns_type) in {value_of(rdata) for rdata in answer}
    outcome = Outcome.OK if found else Outcome.WRONG_ANSWER
    slow = found and elapsed_ms > check.degraded_ms
    return CheckResult(target.service, target.check_index, sent, outcome, round(elapsed_ms, 1), None, slow)
