"""Our own checks: every HTTP check of a run, concurrently, with httpx.

Bounded concurrency, a timeout per check, a cap on the bytes read and a limit
on redirects. httpx exceptions are mapped to our ``Outcome`` vocabulary here,
once; nothing past this module sees an exception string.

What a latency is. ``CheckResult.latency_ms`` is measured with
``time.perf_counter`` in the process that runs the check, from the moment the
check hands its request to httpx (``client.stream``; after its start slot and
a free concurrency slot, so waiting for either is not counted) until the last
byte of the answer's body, capped at ``max_bytes``, has been read by our
coroutine; closing the connection afterwards is not counted. It includes
resolving the name, connecting, TLS, writing the request, every redirect hop,
and any time our own event loop took to get to the answer: nothing is
subtracted. Every check opens its own connection (no keep-alive between
checks), so one check's latency does not depend on another having reached the
same host first. ``ts`` is when the check was sent.

Keeping that figure honest for a thousand checks (issue 5). On a small
machine one check costs about 1 ms of CPU in httpx, so a thousand started at
once keep an event loop busy for a second, and every answer that arrives
meanwhile waits: that wait would be counted as the service's latency. So:

- Starts are spread evenly over ``spread_s`` seconds (``shares``), in a fixed
  order shuffled by check identity, so one service's checks or a run of
  failing ones are not bunched. Checks that timed out in the previous run
  start first (``first``): a run lasts until its last check ends, so a check
  that will likely hold its whole timeout ends soonest started at once, and
  the others can then be spread over that time without making the run longer
  (``cycle.run_spread``).
- With ``processes`` > 1, worker processes share the checks and keep one
  schedule (``probeworkers``): each loop then carries a fraction of the load.
- Each check has an httpx client to itself, borrowed from a shelf
  (``ClientShelf``): httpcore's pool walks all its connections at every
  request and answer, quadratic when hundreds share one pool.
- httpx runs on a plain-asyncio network backend (``loopnet.LoopTransport``)
  instead of httpcore's AnyIO one: same client, pool and parser, ~20% less
  CPU a check.
- A process rehearses a few checks against itself before its first real one
  (``_rehearse``), loads what httpcore loads lazily (``_warm_up``), and the
  garbage collector skips what existed before the run
  (``gcfreeze.OldObjectsFrozen``): a full collection would stall every check
  in flight.
- Timeouts are ``asyncio.timeout`` (no extra task per check); tasks are made
  at their start slot, not all at once.

``ProbeRun.loop_lag`` reports how late each 10 ms tick of every probing loop
woke: the measure of how far the loop itself could have delayed an answer.
"""

from __future__ import annotations

import asyncio
import importlib.util
import ssl
import sys
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import anyio
import httpx

from statusgen.config import CheckConfig, Config
from statusgen.gcfreeze import OldObjectsFrozen
from statusgen.model import CheckId, CheckResult, Outcome
from statusgen.neterrors import outcome_of
from statusgen.probe.loopnet import LoopTransport
from statusgen.timeutil import utcnow

MAX_REDIRECTS = 5
TICK_S = 0.010                  # the loop-lag ticker's sleep
REHEARSALS = 3                  # checks a process makes to itself before its first real one
MIN_CHECKS_PER_PROCESS = 100    # fewer checks than this do not pay for a worker process's start


@dataclass(frozen=True)
class CheckTarget:
    service: str
    check_index: int          # 0-based position of the check in the service's config
    check: CheckConfig


def targets(config: Config) -> list[CheckTarget]:
    return [CheckTarget(s.slug, i, c) for s in config.services for i, c in enumerate(s.checks)]


def classify_exception(exc: BaseException) -> Outcome:
    """Map an httpx (or socket) exception to our vocabulary (see ``neterrors``)."""
    return outcome_of(exc)


def judge(check: CheckConfig, status: int, body: bytes, too_large: bool) -> Outcome:
    """The outcome of a complete answer, by the check's expectations."""
    if status not in check.expect_status:
        return Outcome.HTTP_STATUS
    if too_large:
        return Outcome.TOO_LARGE
    if check.keyword and check.keyword.encode("utf-8") not in body:
        return Outcome.KEYWORD
    return Outcome.OK


# -- one check ----------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    """A complete (capped) answer and how long it took, in ms from the request."""

    status: int
    body: bytes
    too_large: bool
    elapsed_ms: float


async def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


async def _attempt(client: httpx.AsyncClient, check: CheckConfig) -> Answer:
    """Request, read the capped body; the clock stops at the last byte, before the connection closes."""
    start = time.perf_counter()
    async with client.stream(check.method, check.url) as response:
        body, too_large = await _read_capped(response, check.max_bytes)
        elapsed = (time.perf_counter() - start) * 1000.0
        return Answer(response.status_code, body, too_large, elapsed)


async def probe_one(client: httpx.AsyncClient, target: CheckTarget,
                    clock: Callable[[], datetime] = utcnow) -> CheckResult:
    """One check, within its timeout; every failure becomes an outcome."""
    check = target.check
    sent = clock()
    try:
        async with asyncio.timeout(check.timeout):
            answer = await _attempt(client, check)
    except Exception as exc:  # noqa: BLE001 -- every failure becomes an outcome, by design
        return CheckResult(target.service, target.check_index, sent, classify_exception(exc), None, None, False)
    outcome = judge(check, answer.status, answer.body, answer.too_large)
    slow = outcome is Outcome.OK and answer.elapsed_ms > check.degraded_ms
    return CheckResult(target.service, target.check_index, sent, outcome, round(answer.elapsed_ms, 1),
                       answer.status, slow)


# -- clients ------------------------------------------------------------------

def make_client(user_agent: str, concurrency: int, tls: ssl.SSLContext | None = None) -> httpx.AsyncClient:
    """An httpx client for checks: plain-asyncio transport, no keep-alive between checks,
    no timeouts of its own."""
    transport = LoopTransport(tls or httpx.create_ssl_context(), concurrency)
    return httpx.AsyncClient(
        follow_redirects=True, max_redirects=MAX_REDIRECTS, transport=transport,
        headers={"User-Agent": user_agent, "Accept": "*/*"},
        timeout=httpx.Timeout(None),  # each check's own timeout applies (asyncio.timeout)
    )


class ClientShelf:
    """Idle httpx clients sharing one TLS context; a check borrows one and returns it clean.

    A client serves one check at a time, so its httpcore pool never holds more
    than that check's connection: the pool scans all its connections at every
    request and answer, which is quadratic when hundreds of checks share one.
    No cookie and no connection passes from one check to the next.
    """

    def __init__(self, user_agent: str, tls: ssl.SSLContext) -> None:
        self.user_agent = user_agent
        self.tls = tls
        self.idle: list[httpx.AsyncClient] = []
        self.made: list[httpx.AsyncClient] = []

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        if not self.idle:
            self.made.append(make_client(self.user_agent, 1, self.tls))
            self.idle.append(self.made[-1])
        client = self.idle.pop()
        try:
            yield client
        finally:
            client.cookies.clear()
            self.idle.append(client)

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.made))


def _remember_sniffio_is_missing() -> None:
    """httpcore tries ``import sniffio`` for every lock it makes (six per request); when sniffio
    is not installed each try searches sys.path again, about 1 ms of CPU per check in all.
    Record the absence once, as Python does for a module known to be missing; httpcore then
    assumes asyncio, as it did anyway."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


# -- a share of the checks, on this process's event loop ----------------------

def _warm_up() -> ssl.SSLContext:
    """Load now what httpx would load during the first check, inside its latency; the TLS context.

    httpcore's locks and events load AnyIO's asyncio backend when the first one
    is made (about 50 ms here); httpcore also tries ``import sniffio`` for each.
    """
    _remember_sniffio_is_missing()
    anyio.Event()
    return httpx.create_ssl_context()


class _Rehearsal(asyncio.Protocol):
    """The loopback server of a rehearsal: answers each request as soon as its head is in, and closes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.head = b""

    def data_received(self, data: bytes) -> None:
        self.head += data
        if b"\r\n\r\n" in self.head:
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            self.transport.close()


class _Rehearsed:
    """Whether this process has rehearsed (see ``_rehearse``)."""

    done = False


async def _rehearse(tls: ssl.SSLContext) -> None:
    """Once a process, a few checks against a loopback server of our own before the first real one.

    A fresh process runs the request path slowly the first times (Python
    specializes bytecode as it runs it; first uses initialise things): measured
    on the first real checks, that is latency the services never had (20-30 ms
    here). Whatever the rehearsal's outcome, it is not kept.
    """
    if _Rehearsed.done:
        return
    _Rehearsed.done = True
    server = await asyncio.get_running_loop().create_server(_Rehearsal, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    shelf = ClientShelf("statusgen rehearsal", tls)
    try:
        for _ in range(REHEARSALS):
            async with shelf.client() as client:
                await probe_one(client, CheckTarget("", 0, CheckConfig(url, keyword="ok", timeout=1.0)))
    finally:
        await shelf.aclose()
        server.close()


async def ready_to_probe() -> ssl.SSLContext:
    """Warmed up and rehearsed; the TLS context for the checks."""
    tls = _warm_up()
    await _rehearse(tls)
    return tls


@dataclass(frozen=True)
class Share:
    """The checks one event loop runs; check *i* starts ``offsets[i]`` seconds after the run starts."""

    targets: tuple[CheckTarget, ...]
    offsets: tuple[float, ...]
    positions: tuple[int, ...]     # where each check's result goes in the run's results
    user_agent: str
    concurrency: int


@dataclass(frozen=True)
class ProbeRun:
    """A run's results, in the order of its checks, and how late its event loops were."""

    results: list[CheckResult]
    loop_lag: list[tuple[float, float]]   # (seconds after the start, ms late) of each tick of a probing loop


async def _tick(lags: list[tuple[float, float]], start_at: float) -> None:
    """Forever: how late ``asyncio.sleep(TICK_S)`` wakes, and when."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(TICK_S)
        now = loop.time()
        lags.append((now - start_at, (now - before - TICK_S) * 1000.0))


async def _in_slots(share: Share, start_at: float,
                    run: Callable[[CheckTarget], Awaitable[CheckResult]]) -> list[CheckResult]:
    """Start each check at its offset after ``start_at`` (loop time), each as its own task.

    Tasks are made at their slot, not all at the start, so the start is no
    burst of a thousand task steps; a slot already past starts at once.
    """
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[CheckResult]] = []
    async with asyncio.TaskGroup() as group:
        for target, offset in zip(share.targets, share.offsets, strict=True):
            wait = start_at + offset - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            tasks.append(group.create_task(run(target)))
    return [task.result() for task in tasks]


async def run_share(share: Share, start_at: float, tls: ssl.SSLContext,
                    clock: Callable[[], datetime] = utcnow) -> ProbeRun:
    """Probe a share on the running loop, from ``start_at`` (loop time, i.e. ``time.monotonic()``)."""
    gate = asyncio.Semaphore(share.concurrency)
    shelf = ClientShelf(share.user_agent, tls)
    lags: list[tuple[float, float]] = []

    async def in_turn(target: CheckTarget) -> CheckResult:
        async with gate, shelf.client() as client:
            return await probe_one(client, target, clock)

    ticker = asyncio.create_task(_tick(lags, start_at))
    with OldObjectsFrozen():
        try:
            results = await _in_slots(share, start_at, in_turn)
        finally:
            ticker.cancel()
            await shelf.aclose()
    return ProbeRun(results, lags)


# -- a cycle ------------------------------------------------------------------

def start_order(todo: Sequence[CheckTarget], first: Collection[CheckId] = frozenset()) -> list[int]:
    """Positions of the checks in the order they start: the checks in ``first`` (those that timed
    out in the previous run: they will likely last their whole timeout, so they start before the
    others and end no later than they must), then the others; each group in a fixed shuffle, by a
    hash of each check's service and index, so that one service's checks (often one host) or a
    run of failing checks are spread over the window and over the workers, the same way every
    cycle."""
    def key(i: int) -> tuple[bool, int, int]:
        ident = (todo[i].service, todo[i].check_index)
        return ident not in first, zlib.crc32(f"{ident[0]}/{ident[1]}".encode()), i
    return sorted(range(len(todo)), key=key)


def shares(todo: Sequence[CheckTarget], user_agent: str, concurrency: int, spread_s: float,
           processes: int, first: Collection[CheckId] = frozenset()) -> list[Share]:
    """The checks in start order (``start_order``), dealt out in turn to at most ``processes`` shares.

    The *s*-th check to start starts ``s * spread_s / n`` seconds after the first,
    wherever it runs; a share gets its part of ``concurrency``; a process is
    only worth its start for at least MIN_CHECKS_PER_PROCESS checks.
    """
    count = max(1, min(processes, len(todo) // MIN_CHECKS_PER_PROCESS))
    order = start_order(todo, first)
    step = spread_s / len(todo) if todo else 0.0
    each = max(1, -(-concurrency // count))
    return [Share(tuple(todo[i] for i in order[j::count]), tuple(s * step for s in range(j, len(order), count)),
                  tuple(order[j::count]), user_agent, each)
            for j in range(count)]


def _merged(parts: Sequence[Share], runs: Sequence[ProbeRun]) -> ProbeRun:
    """The shares' runs as one: results back in the checks' order, every loop's lag."""
    results: list[CheckResult | None] = [None] * sum(len(p.positions) for p in parts)
    for part, run in zip(parts, runs, strict=True):
        for position, result in zip(part.positions, run.results, strict=True):
            results[position] = result
    return ProbeRun([r for r in results if r is not None], [lag for run in runs for lag in run.loop_lag])


async def probe_run(config: Config, only: Sequence[CheckTarget] | None = None,
                    clock: Callable[[], datetime] = utcnow, spread_s: float = 0.0,
                    processes: int = 1, first: Collection[CheckId] = frozenset()) -> ProbeRun:
    """``probe_all``, with how late the probing event loops were."""
    todo = list(only) if only is not None else targets(config)
    if not todo:
        return ProbeRun([], [])
    parts = shares(todo, config.site.user_agent, config.site.concurrency, spread_s, processes, first)
    if len(parts) > 1:
        from statusgen.probe.workers import (
            in_workers,  # here: the workers' module imports this one
        )
        return _merged(parts, await in_workers(parts, clock))
    tls = await ready_to_probe()
    return _merged(parts, [await run_share(parts[0], asyncio.get_running_loop().time(), tls, clock)])


async def probe_all(config: Config, only: Sequence[CheckTarget] | None = None,
                    clock: Callable[[], datetime] = utcnow, spread_s: float = 0.0,
                    processes: int = 1, first: Collection[CheckId] = frozenset()) -> list[CheckResult]:
    """Run every check concurrently, at most ``site.concurrency`` at a time; results in the checks' order.

    With ``spread_s``, the *i*-th of *n* checks to start starts ``i * spread_s / n``
    seconds after the first; the checks in ``first`` (service, check index) start
    before the others (``start_order``). With ``processes`` > 1 (and enough
    checks), worker processes share the checks; each result's ``ts`` then comes
    from the real clock, shifted by the offset between ``clock`` and it at the start.
    """
    return (await probe_run(config, only, clock, spread_s, processes, first)).results
