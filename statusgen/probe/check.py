"""One check: an HTTP request, judged by its status, a keyword and a byte cap, and timed.

What a latency is. ``CheckResult.latency_ms`` is measured with
``time.perf_counter`` in the process that runs the check, from the moment the
check hands its request to httpx until the last byte of the answer's body,
decoded and capped at ``max_bytes``, has been read by our coroutine; closing
the connection afterwards is not counted. Judging the answer (its keyword and
conditions) comes after, and is not counted either. It includes resolving the name,
connecting, TLS, writing the request, every redirect hop (and resolving where
it leads, ``neterrors.opened``), and any time our own event loop took to get
to the answer: nothing is subtracted. ``ts`` is when the check was sent.

The variables a check's url, headers and body name are read when its request
is made (``secrets.expand``), and their values go nowhere but into the request.
An HTTPS answer carries the certificate of the server that gave it
(``tls.certificate_of``); whether it expires soon is for the decisions.
httpx's exceptions become our outcomes here (``neterrors.outcome_of``), once:
nothing past this module sees an exception string.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx

from statusgen.config import CheckConfig
from statusgen.config.conditions import Answer, first_failed
from statusgen.config.secrets import expand
from statusgen.model import CheckResult, Outcome
from statusgen.neterrors import (
    ACCEPT_ENCODING,
    REFUSE_INSIDE,
    PinnedTransport,
    RedirectGuard,
    opened,
    outcome_of,
    read_capped,
)
from statusgen.probe.tls import certificate_of
from statusgen.timeutil import utcnow

MAX_REDIRECTS = 5
EMPTY = httpx.Headers()


@dataclass(frozen=True)
class CheckTarget:
    service: str
    check_index: int  # 0-based position of the check in the service's config
    check: CheckConfig


def judge(
    check: CheckConfig, status: int, body: bytes | None, latency_ms: float = 0.0, headers: httpx.Headers = EMPTY
) -> tuple[Outcome, str | None]:
    """The outcome of a complete answer, by the check's expectations (``body`` None: it was larger
    than the cap), and the condition it failed, if that is why."""
    if status not in check.expect_status:
        return Outcome.HTTP_STATUS, None
    if body is None:
        return Outcome.TOO_LARGE, None
    if check.keyword and check.keyword.encode("utf-8") not in body:
        return Outcome.KEYWORD, None
    if check.conditions:
        names = {name.lower(): ", ".join(headers.get_list(name)) for name in headers}
        failed = first_failed(check.conditions, Answer(status, latency_ms, names, body))
        if failed is not None:
            return Outcome.CONDITION, failed.text()
    return Outcome.OK, None


def make_client(user_agent: str, tls: ssl.SSLContext, source: str | None = None) -> httpx.AsyncClient:
    """A client for checks, one at a time: httpx's own transport (``PinnedTransport``: a redirect
    goes where ``neterrors.opened`` checked it), no connection kept after an
    answer (every check connects anew, so its latency never depends on another's connection),
    at most MAX_REDIRECTS redirects (followed by ``neterrors.opened``), no timeouts of its own
    (each check's applies, ``probe_one``), and only the encodings ``neterrors.read_capped`` decodes;
    ``source``: the local address its connections leave from (an agent's ``--bind``)."""
    inner = httpx.AsyncHTTPTransport(verify=tls, limits=httpx.Limits(max_keepalive_connections=0), local_address=source)
    transport = PinnedTransport(inner)
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        max_redirects=MAX_REDIRECTS,
        timeout=httpx.Timeout(None),
        headers={"User-Agent": user_agent, "Accept": "*/*", "Accept-Encoding": ACCEPT_ENCODING},
    )


def _headers(check: CheckConfig) -> list[tuple[str, str]]:
    return [(name, expand(value)) for name, value in check.headers]


async def probe_one(
    client: httpx.AsyncClient,
    target: CheckTarget,
    clock: Callable[[], datetime] = utcnow,
    guard: RedirectGuard = REFUSE_INSIDE,
) -> CheckResult:
    """One check, within its timeout; every failure becomes an outcome. A variable the check names
    that is not set is the operator's to fix, not the service's failure: it raises."""
    check = target.check
    url, headers = expand(check.url), _headers(check)
    content = expand(check.body) if check.body is not None else None
    private = [name for name, _ in check.headers]
    sent = clock()
    try:
        async with asyncio.timeout(check.timeout):
            start = time.perf_counter()
            request = client.build_request(check.method, url, headers=headers, content=content)
            async with opened(client, request, guard, private, check.follow_redirects) as response:
                body = await read_capped(response, check.max_bytes)
                elapsed_ms = (time.perf_counter() - start) * 1000.0
                status, certificate = response.status_code, certificate_of(response)
    except Exception as exc:
        return CheckResult(target.service, target.check_index, sent, outcome_of(exc), None, None, False)
    outcome, failed = judge(check, status, body, elapsed_ms, response.headers)
    slow = outcome is Outcome.OK and elapsed_ms > check.degraded_ms
    latency = round(elapsed_ms, 1)
    return CheckResult(target.service, target.check_index, sent, outcome, latency, status, slow, certificate, failed)
