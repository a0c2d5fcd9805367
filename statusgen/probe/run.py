"""A run of checks: every check of a cycle, concurrently, on one event loop, timed honestly.

Making a request and reading its answer costs httpx some CPU, so a thousand
checks started at once would keep the event loop busy, and every answer
arriving meanwhile would wait: that wait would be counted as the services'
latency. What keeps the figures honest, each done once, here:

- The starts are spread evenly over ``spread_s`` seconds, in a fixed order
  shuffled by check identity, so one service's checks (often one host) or a
  run of failing ones are not bunched (``start_order``). Checks that timed out
  in the previous run start first: a run lasts until its last check ends, so
  a check that will likely hold its whole timeout ends soonest started at
  once, and the others can be spread over that time without making the run
  longer (``cycle.run_spread`` picks the spread).
- Each check in flight has an httpx client to itself (``Clients``): a pool
  shared by hundreds of checks walks all its connections at every request and
  answer. Clients are lent from a shelf and returned clean, not made per
  check: making one costs a fifth of a check's CPU.
- A process runs a few checks against a loopback server of its own before its
  first real one (``_warm_up``): the first runs of the request path are slow
  (imports, first uses, bytecode not yet specialised), and measured on real
  checks that would be latency the services never had.
- The garbage collector is kept out of the run (``gc.disable``): a full
  collection would stall every check in flight. What the run leaves is
  collected when it ends.
- A task is made at its start slot, not all at once, and concurrency is
  bounded by ``site.concurrency``.
- A check whose first result the caller wants confirmed (``confirm``: one
  that failed where it had been passing, say) is tried again within the run,
  ``check.confirm`` more times, each ``check.confirm_every`` seconds after its
  first try started, until a try says otherwise. Only the tries hold a slot:
  the waits between them do not, so they add at most their spacing to a run.

TCP and DNS checks (``tcp``, ``dns``) take their slots like HTTP ones, without a
client; an HTTPS check with a ``ca_file`` borrows from a shelf of its own, whose
clients trust those CAs alone (``tls.trust``).

``ProbeRun.loop_lag`` reports how late each 10 ms tick of the loop woke: how
far the loop itself could have delayed an answer.
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import httpx

from statusgen.config import CheckConfig
from statusgen.config.secrets import MissingSecret
from statusgen.model import CheckId, CheckResult
from statusgen.neterrors import REFUSE_INSIDE, RedirectGuard
from statusgen.probe.check import CheckTarget, make_client, probe_one
from statusgen.probe.dns import probe_dns
from statusgen.probe.tcp import probe_tcp
from statusgen.probe.tls import trust
from statusgen.timeutil import utcnow

TICK_S = 0.010  # the loop-lag ticker's sleep
WARM_UP_CHECKS = 3  # checks a process makes to itself before its first real one


#: Whether a check's first result of a run is to be confirmed by tries again within the run.
Confirm = Callable[[CheckResult], bool]


@dataclass(frozen=True)
class ProbeRun:
    """A run's results, in the order of its checks (each check's tries in the order made), and
    how late its event loop was."""

    results: list[CheckResult]
    loop_lag: list[tuple[float, float]]  # (seconds after the start, ms late) of each tick


def start_order(todo: Sequence[CheckTarget], first: Collection[CheckId] = frozenset()) -> list[int]:
    """Positions of the checks in the order they start: those in ``first`` (they timed out in the
    previous run), then the others; each group in a fixed shuffle, by a hash of each check's
    service and index, the same every run."""

    def key(i: int) -> tuple[bool, int, int]:
        ident = (todo[i].service, todo[i].check_index)
        return ident not in first, zlib.crc32(f"{ident[0]}/{ident[1]}".encode()), i

    return sorted(range(len(todo)), key=key)


class Clients:
    """A shelf of idle clients: a check borrows one (``lend``) and returns it, its cookies cleared."""

    def __init__(self, user_agent: str, tls: ssl.SSLContext, source: str | None = None):
        self.user_agent, self.tls, self.source = user_agent, tls, source
        self.idle: list[httpx.AsyncClient] = []
        self.made: list[httpx.AsyncClient] = []

    @asynccontextmanager
    async def lend(self) -> AsyncIterator[httpx.AsyncClient]:
        if not self.idle:
            self.made.append(make_client(self.user_agent, self.tls, self.source))
            self.idle.append(self.made[-1])
        client = self.idle.pop()
        try:
            yield client
        finally:
            client.cookies.clear()
            self.idle.append(client)

    async def aclose(self) -> None:
        await asyncio.gather(*(client.aclose() for client in self.made))


class _Warm:
    done = False  # whether this process has warmed up


class _Answer(asyncio.Protocol):
    """The loopback server of the warm-up: answers each request as soon as its head is in, and closes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.head = b""

    def data_received(self, data: bytes) -> None:
        self.head += data
        if b"\r\n\r\n" in self.head:
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            self.transport.close()


async def _warm_up(tls: ssl.SSLContext) -> None:
    """Once a process, a few checks against a loopback server of our own; their results are dropped."""
    if _Warm.done:
        return
    _Warm.done = True
    server = await asyncio.get_running_loop().create_server(_Answer, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    clients = Clients("statusgen warm-up", tls)
    try:
        for _ in range(WARM_UP_CHECKS):
            async with clients.lend() as client:
                await probe_one(client, CheckTarget("", 0, CheckConfig(url, keyword="ok", timeout=1.0)))
    finally:
        await clients.aclose()
        server.close()


async def _tick(lags: list[tuple[float, float]], start_at: float) -> None:
    """Forever: how late ``asyncio.sleep(TICK_S)`` wakes, and when."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(TICK_S)
        now = loop.time()
        lags.append((now - start_at, (now - before - TICK_S) * 1000.0))


async def probe_run(
    todo: Sequence[CheckTarget],
    user_agent: str,
    concurrency: int,
    clock: Callable[[], datetime] = utcnow,
    spread_s: float = 0.0,
    first: Collection[CheckId] = frozenset(),
    guard: RedirectGuard = REFUSE_INSIDE,
    source: str | None = None,
    confirm: Confirm | None = None,
) -> ProbeRun:
    """Run the checks ``todo``, at most ``concurrency`` at a time, the *s*-th of *n* to start
    starting ``s * spread_s / n`` seconds after the first (in ``start_order``), their redirects
    kept by ``guard``, HTTP connections leaving from ``source`` if given, those whose first
    result ``confirm`` wants tried again; the results in the checks' order. A variable a check
    names that is not set stops the run with ``MissingSecret``."""
    if not todo:
        return ProbeRun([], [])
    tls = trust(None)
    await _warm_up(tls)
    loop = asyncio.get_running_loop()
    gate, clients = asyncio.Semaphore(concurrency), Clients(user_agent, tls, source)
    shelves = {c: Clients(user_agent, trust(c), source) for c in {t.check.ca_file for t in todo} if c is not None}
    step = spread_s / len(todo)
    results: list[list[CheckResult]] = [[] for _ in todo]
    lags: list[tuple[float, float]] = []

    async def one(target: CheckTarget) -> CheckResult:
        kind, ca_file = target.check.kind, target.check.ca_file
        async with gate:
            if kind == "tcp":
                return await probe_tcp(target, clock)
            if kind == "dns":
                return await probe_dns(target, clock)
            async with (shelves[ca_file] if ca_file else clients).lend() as client:
                return await probe_one(client, target, clock, guard)

    async def check(position: int) -> None:
        target, started = todo[position], loop.time()
        tries = results[position]
        tries.append(await one(target))
        if confirm is None or not confirm(tries[0]):
            return
        for n in range(1, target.check.confirm + 1):
            await asyncio.sleep(max(0.0, started + n * target.check.confirm_every - loop.time()))
            tries.append(await one(target))
            if tries[-1].up != tries[0].up:
                return  # it says otherwise: nothing left to confirm

    start_at = loop.time()
    ticker = asyncio.create_task(_tick(lags, start_at))
    gc.disable()
    try:
        async with asyncio.TaskGroup() as group:
            for n, position in enumerate(start_order(todo, first)):
                wait = start_at + n * step - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                group.create_task(check(position))
    except* MissingSecret as missing:
        raise missing.exceptions[0] from None  # one line for the operator, as any configuration error
    finally:
        gc.enable()
        ticker.cancel()
        await asyncio.gather(*(shelf.aclose() for shelf in (clients, *shelves.values())))
    return ProbeRun([r for tries in results for r in tries], lags)
