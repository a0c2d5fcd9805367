"""Our own checks: every HTTP check of a run, concurrently, with httpx.

Bounded concurrency, a timeout per check, a cap on the bytes read and a limit
on redirects. httpx exceptions are mapped to our ``Outcome`` vocabulary here,
once; nothing past this module sees an exception string.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import httpx

from .config import CheckConfig, Config
from .neterrors import outcome_of
from .outcomes import Outcome
from .timeutil import utcnow

MAX_REDIRECTS = 5


@dataclass(frozen=True)
class CheckTarget:
    service: str
    check_index: int          # 0-based position of the check in the service's config
    check: CheckConfig


@dataclass(frozen=True)
class CheckResult:
    service: str
    check_index: int
    ts: datetime              # when the check was sent (UTC)
    outcome: Outcome
    latency_ms: float | None  # time to the complete (capped) answer; None when none came
    http_status: int | None
    slow: bool                # answered well, but slower than the check's degraded_ms

    @property
    def up(self) -> bool:
        return self.outcome is Outcome.OK


def targets(config: Config) -> list[CheckTarget]:
    return [CheckTarget(s.slug, i, c) for s in config.services for i, c in enumerate(s.checks)]


def classify_exception(exc: BaseException) -> Outcome:
    """Map an httpx (or socket) exception to our vocabulary (see ``neterrors``)."""
    return outcome_of(exc)


async def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


def judge(check: CheckConfig, status: int, body: bytes, too_large: bool) -> Outcome:
    """The outcome of a complete answer, by the check's expectations."""
    if status not in check.expect_status:
        return Outcome.HTTP_STATUS
    if too_large:
        return Outcome.TOO_LARGE
    if check.keyword and check.keyword.encode("utf-8") not in body:
        return Outcome.KEYWORD
    return Outcome.OK


async def _attempt(client: httpx.AsyncClient, check: CheckConfig) -> tuple[Outcome, int | None]:
    async with client.stream(check.method, check.url) as response:
        body, too_large = await _read_capped(response, check.max_bytes)
        return judge(check, response.status_code, body, too_large), response.status_code


async def probe_one(client: httpx.AsyncClient, target: CheckTarget,
                    clock: Callable[[], datetime] = utcnow) -> CheckResult:
    check = target.check
    sent = clock()
    start = time.perf_counter()
    status: int | None = None
    try:
        outcome, status = await asyncio.wait_for(_attempt(client, check), timeout=check.timeout)
    except Exception as exc:  # every failure becomes an outcome, by design
        outcome = classify_exception(exc)
    elapsed = (time.perf_counter() - start) * 1000.0
    latency = round(elapsed, 1) if outcome not in _NO_ANSWER else None
    slow = outcome is Outcome.OK and elapsed > check.degraded_ms
    return CheckResult(target.service, target.check_index, sent, outcome, latency, status, slow)


_NO_ANSWER = frozenset({Outcome.TIMEOUT, Outcome.DNS, Outcome.CONNECT, Outcome.TLS, Outcome.ERROR})


def make_client(user_agent: str, concurrency: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.AsyncClient(
        follow_redirects=True, max_redirects=MAX_REDIRECTS, limits=limits,
        headers={"User-Agent": user_agent, "Accept": "*/*"},
        timeout=httpx.Timeout(None),  # each check's own timeout applies (asyncio.wait_for)
    )


async def probe_all(config: Config, only: Sequence[CheckTarget] | None = None,
                    clock: Callable[[], datetime] = utcnow) -> list[CheckResult]:
    """Run every check concurrently, at most ``site.concurrency`` at a time."""
    todo = list(only) if only is not None else targets(config)
    gate = asyncio.Semaphore(config.site.concurrency)
    async with make_client(config.site.user_agent, config.site.concurrency) as client:
        async def gated(t: CheckTarget) -> CheckResult:
            async with gate:
                return await probe_one(client, t, clock)
        return list(await asyncio.gather(*(gated(t) for t in todo)))
