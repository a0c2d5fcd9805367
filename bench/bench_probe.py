"""Probe-engine figures: 1,000 checks against loopback targets, concurrent and one by one.

The targets run in a process of their own (a bare asyncio protocol server on
127.0.0.1, as cheap in CPU as it can be): 950 paths answer 50 ms after the
request, 50 never answer. While the concurrent cycle runs, a control process
asks the same target with plain blocking sockets, so the figures show what the
target itself did under that load (its delay as a raw client sees it, loopback
and scheduling included), apart from our client. The probe engine runs as the
site would run it (``statusgen run``): one event loop, the default concurrency
of 100, and the start order and spread ``run_cycle`` gives it.

Two concurrent runs are measured, as a site has them:

- the first run of a site (nothing known of its checks): starts spread over
  1.5 s (``cycle.run_spread``), in a fixed shuffle, so a hanging check may
  start last and the run lasts the spread plus the timeout;
- every later run: the checks that timed out in the run before start first
  (``cycle.timed_out_before``, read from the store's states in a real run; here
  from the first run's results) and the others are spread over their timeout
  less 1 s (2 s). This is the run a site makes every minute of its life, and
  the one the goals are read on; the first is printed beside it.

    python -m bench probe                        # or: make bench (runs every bench)
    BENCH_PROBE_SEQUENTIAL=0 python -m bench probe   # without the 3.5-minute baseline

Five later runs are made; printed beside its budget (PASS/FAIL), the median
of the five of each: the later run's time (at most the timeout + 2 s) and its
latency error at p95 (measured latency minus each
target's true delay, the time the target held that request on its own clock,
which is 50 ms plus however late its timer fired: at most 5 ms). Printed as
figures: the first run, the sequential baseline and the ratio, the error
against the nominal 50 ms, and the lag of the probing event loop.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig
from statusgen.cycle import run_spread
from statusgen.model import CheckId, Outcome
from statusgen.probe import Confirm, ProbeRun, probe_run, targets

CHECKS = 1000
HANGING_EVERY = 20  # every 20th check hangs: 50 of 1000, 5%
DELAY_S = 0.050  # what an answering target waits before it answers
TIMEOUT_S = 3.0  # the checks' timeout; the sequential baseline then takes about 3.5 minutes
CYCLE_BUDGET_S = TIMEOUT_S + 2.0
ERROR_BUDGET_MS = 5.0
LATER_RUNS = 5  # the budgets are read on the median of these
CONCURRENCY = 100  # the default site.concurrency
HANG_CAP_S = 30.0  # a hanging target lets go after this, whatever the client does
CONTROL_EVERY_S = 0.020  # the control client's pause between requests
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 16\r\nConnection: close\r\n\r\nstatus: all good"
)
CTX = multiprocessing.get_context("spawn")


# -- the target: a process of its own, so it does not share our event loops ---

HELD: dict[str, float] = {}  # in the target process: path -> seconds it held that request (its true delay)


class Answering(asyncio.Protocol):
    """One connection: answer DELAY_S after the request came in, or hold it silently when the path
    starts with /hang. A bare protocol, not streams: the target must cost as little CPU as it can.
    Each answer's true delay (from the request read to the answer written, on the target's clock:
    DELAY_S plus however late its timer fired) is kept in HELD."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.head = b""
        self.timer: asyncio.TimerHandle | None = None
        self.path = ""
        self.read_at = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.head += data
        if self.timer is not None or b"\r\n\r\n" not in self.head:
            return
        loop = asyncio.get_running_loop()
        self.path = self.head.split(b" ", 2)[1].decode("latin-1")
        hang = self.path.startswith("/hang")
        self.read_at = loop.time()
        self.timer = loop.call_later(HANG_CAP_S if hang else DELAY_S, self.answer, not hang)

    def answer(self, speak: bool) -> None:
        if self.transport is not None and not self.transport.is_closing():
            if speak:
                self.transport.write(ANSWER)
                HELD[self.path] = asyncio.get_running_loop().time() - self.read_at
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()


async def _serve(ready: Connection, stop: Event) -> None:
    server = await asyncio.get_running_loop().create_server(Answering, "127.0.0.1", 0, backlog=4096)
    ready.send(server.sockets[0].getsockname()[1])
    while not stop.is_set():
        await asyncio.sleep(0.1)
        if ready.poll():  # asked for the true delays so far
            ready.recv()
            ready.send(dict(HELD))
            HELD.clear()
    server.close()


def serve_target(ready: Connection, stop: Event) -> None:
    """Process entry point: the asyncio target server on a free loopback port."""
    asyncio.run(_serve(ready, stop))


@dataclass
class Target:
    port: int
    pid: int
    pipe: Connection

    def held(self) -> dict[str, float]:
        """Each answered path's true delay in seconds since the last ask (the target's own clock)."""
        self.pipe.send("held")
        if not self.pipe.poll(30):
            raise RuntimeError("the target process did not tell its delays")
        held: dict[str, float] = self.pipe.recv()
        return held


@contextmanager
def target_process() -> Iterator[Target]:
    """Start the target process; yield it; stop it afterwards."""
    stop = CTX.Event()
    mine, theirs = CTX.Pipe()
    proc = CTX.Process(target=serve_target, args=(theirs, stop), daemon=True)
    proc.start()
    try:
        if not mine.poll(30):
            raise RuntimeError("the target process did not start")
        yield Target(mine.recv(), proc.pid or 0, mine)
    finally:
        stop.set()
        proc.join(5)
        if proc.is_alive():
            proc.terminate()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a running process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU time every core of the machine has spent busy so far (all processes), from /proc/stat."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# -- the control: a plain blocking-socket client in a process of its own ------


def _raw_get(port: int) -> float:
    """Seconds from connect to the last byte of the answer, with plain sockets."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /control HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        while sock.recv(65536):
            pass
    return time.perf_counter() - start


def control_client(port: int, stop: Event, out: Connection) -> None:
    """Process entry point: ask the target every CONTROL_EVERY_S until told to stop; send the timings."""
    timings: list[float] = []
    deadline = time.monotonic() + 600
    while not stop.is_set() and time.monotonic() < deadline:
        timings.append(_raw_get(port))
        time.sleep(CONTROL_EVERY_S)
    out.send(timings)


@contextmanager
def control(port: int) -> Iterator[list[float]]:
    """Run the control client for the duration of the block; the list fills when it ends."""
    stop = CTX.Event()
    mine, theirs = CTX.Pipe()
    proc = CTX.Process(target=control_client, args=(port, stop, theirs), daemon=True)
    proc.start()
    timings: list[float] = []
    try:
        yield timings
    finally:
        stop.set()
        if mine.poll(30):
            timings.extend(mine.recv())
        proc.join(5)


# -- the checks and the runs --------------------------------------------------


def bench_config(port: int, concurrency: int) -> Config:
    """1000 services with one check each; every HANGING_EVERY-th never answers."""
    services = []
    for i in range(CHECKS):
        path = f"/hang/{i}" if i % HANGING_EVERY == HANGING_EVERY - 1 else f"/ok/{i}"
        check = CheckConfig(f"http://127.0.0.1:{port}{path}", keyword="all good", timeout=TIMEOUT_S)
        services.append(ServiceConfig(f"s{i}", f"Service {i}", "bench", (check,)))
    site = SiteConfig(concurrency=concurrency)
    return Config(path=None, site=site, categories={"bench": "Bench"}, services=tuple(services))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Timed:
    """One run of the engine and what it cost."""

    seconds: float
    own_cpu_s: float  # CPU of this process during the run
    machine_busy_s: float  # CPU time all cores spent busy during the run, whoever used it
    run: ProbeRun


def timed(
    config: Config, spread_s: float, first: frozenset[CheckId] = frozenset(), confirm: Confirm | None = None
) -> Timed:
    """One run of the engine, timed from the call to the last result."""
    start, own, busy = time.perf_counter(), time.process_time(), machine_busy_seconds()
    site = config.site
    todo = targets(config)
    run = asyncio.run(
        probe_run(todo, site.user_agent, site.concurrency, spread_s=spread_s, first=first, confirm=confirm)
    )
    return Timed(time.perf_counter() - start, time.process_time() - own, machine_busy_seconds() - busy, run)


def sequential(config: Config) -> Timed:
    """The baseline: the same engine and client settings, one check after another, as Upptime does."""
    return timed(replace(config, site=replace(config.site, concurrency=1)), 0.0)


# -- figures ------------------------------------------------------------------


def percentiles(values: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95 and max (nearest rank)."""
    ordered = sorted(values)
    if not ordered:
        return (float("nan"),) * 3

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))]

    return rank(0.50), rank(0.95), ordered[-1]


def describe(values: Sequence[float]) -> str:
    p50, p95, top = percentiles(values)
    return f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {top:.1f} ms (n={len(values)})"


def latency_errors(run: ProbeRun) -> list[float]:
    """Measured latency minus the targets' nominal delay (50 ms), in ms, over the checks that answered."""
    return [r.latency_ms - DELAY_S * 1000 for r in run.results if r.latency_ms is not None and r.up]


def true_errors(run: ProbeRun, held: dict[str, float]) -> list[float]:
    """Measured latency minus the delay the target really held each request (its own clock), in ms.
    The target's lag in reading a request is not in its figure, so it counts against us."""
    errors = []
    for r in run.results:
        delay = held.get(f"/ok/{r.service[1:]}")
        if r.latency_ms is not None and r.up and delay is not None:
            errors.append(r.latency_ms - delay * 1000)
    return errors


def outcome_counts(run: ProbeRun) -> str:
    counts: dict[Outcome, int] = {}
    for r in run.results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    return ", ".join(f"{o.value} {n}" for o, n in sorted(counts.items()))


def timed_out(run: ProbeRun) -> frozenset[CheckId]:
    """The checks of a run that timed out: what ``cycle.timed_out_before`` reads back from the store."""
    return frozenset((r.service, r.check_index) for r in run.results if r.outcome is Outcome.TIMEOUT)


@dataclass(frozen=True)
class Measured:
    """A concurrent run, the control client's timings meanwhile, the target's CPU and true delays."""

    spread_s: float
    cycle: Timed
    control_s: list[float]
    target_cpu_s: float
    held: dict[str, float]


def measured(target: Target, config: Config, first: frozenset[CheckId]) -> Measured:
    """One concurrent run as ``statusgen run`` makes it, knowing ``first`` from the run before."""
    spread = run_spread(config, first)
    with control(target.port) as control_s:
        target_cpu = cpu_seconds(target.pid)
        cycle = timed(config, spread, first)
        target_cpu = cpu_seconds(target.pid) - target_cpu
    return Measured(spread, cycle, control_s, target_cpu, target.held())


def report_cycle(later: Sequence[Measured]) -> Measured:
    """The budgets read on the medians of the ``later`` runs, each run's figures beside, and the
    details of the median run (returned)."""
    runs = sorted(later, key=lambda r: percentiles(true_errors(r.cycle.run, r.held))[1])
    m = runs[len(runs) // 2]
    cycle, held = m.cycle, m.held
    expected = (
        f"{Outcome.OK.value} {CHECKS - CHECKS // HANGING_EVERY}, {Outcome.TIMEOUT.value} {CHECKS // HANGING_EVERY}"
    )
    starting = [lag for at, lag in cycle.run.loop_lag if at <= m.spread_s + DELAY_S]
    print(
        f"every later run (the checks that timed out in the run before start first; the others' starts "
        f"spread over {m.spread_s:.1f} s), {len(runs)} runs, the median of each figure:"
    )
    seconds = sorted(r.cycle.seconds for r in runs)
    verdict(
        f"probe cycle, 1,000 checks (median of {len(runs)})",
        f"{seconds[len(seconds) // 2]:.2f} s",
        f"<= {CYCLE_BUDGET_S:.1f} s",
        seconds[len(seconds) // 2] <= CYCLE_BUDGET_S,
    )
    errors = [percentiles(true_errors(r.cycle.run, r.held))[1] for r in runs]
    p95 = errors[len(errors) // 2]
    verdict(
        f"latency error p95, against each target's true delay (median of {len(runs)})",
        f"{p95:.1f} ms",
        f"<= {ERROR_BUDGET_MS:.0f} ms",
        p95 <= ERROR_BUDGET_MS,
    )
    print(
        "  each run: "
        + "; ".join(f"{r.cycle.seconds:.2f} s, p95 {e:.1f} ms" for r, e in zip(runs, errors, strict=True))
        + " (one run is at the mercy of the machine's neighbours)"
    )
    print("  the median run's figures:")
    print(f"  outcomes: {outcome_counts(cycle.run)} (expected {expected})")
    print(f"  latency error, measured - each target's true delay: {describe(true_errors(cycle.run, held))}")
    print(
        f"    (the true delay: from the request read to the answer written, on the target's clock: "
        f"{describe([h * 1000 for h in held.values()])})"
    )
    print(f"  latency error, measured - 50 ms: {describe(latency_errors(cycle.run))}")
    print("  event-loop lag of the probing loops (asyncio.sleep(0.01) woken late by), reported:")
    print(f"    while checks start and answer (first {m.spread_s + DELAY_S:.2f} s): {describe(starting)}")
    print(f"    over the whole cycle: {describe([lag for _, lag in cycle.run.loop_lag])}")
    print(
        f"  the target's own delay - 50 ms, asked with raw sockets from another process meanwhile: "
        f"{describe([t * 1000 - DELAY_S * 1000 for t in m.control_s])} (should be near 0)"
    )
    ours = cycle.own_cpu_s + m.target_cpu_s
    print(
        f"  CPU: the probing process {cycle.own_cpu_s:.2f} s ({cycle.own_cpu_s / CHECKS * 1000:.2f} ms a check), "
        f"target {m.target_cpu_s:.2f} s; the machine's {os.cpu_count()} cores were busy "
        f"{cycle.machine_busy_s:.2f} s, {max(0.0, cycle.machine_busy_s - ours):.2f} s of it other work "
        f"(the control client, other programs)"
    )
    return m


def verdict(name: str, value: str, budget: str, ok: bool) -> None:
    print(f"  {name:<52} {value:>10}   budget {budget:<10} {'PASS' if ok else 'FAIL'}", flush=True)


def main() -> None:
    print(
        f"{CHECKS} checks ({CHECKS // HANGING_EVERY} hang), targets answer after {DELAY_S * 1000:.0f} ms; "
        f"timeout {TIMEOUT_S:.0f} s; one process; concurrency {CONCURRENCY}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with target_process() as target:
        config = bench_config(target.port, CONCURRENCY)
        target.held()
        cold = measured(target, config, frozenset())
        first = timed_out(cold.cycle.run)
        later = [measured(target, config, first) for _ in range(LATER_RUNS)]
        print(
            f"a site's first run (nothing known yet: starts spread over {cold.spread_s:.1f} s in a fixed shuffle): "
            f"{cold.cycle.seconds:.2f} s; latency error against the true delay "
            f"{describe(true_errors(cold.cycle.run, cold.held))}"
        )
        warm = report_cycle(later)
        tried = timed(config, run_spread(config, first), first, confirm=lambda r: not r.up)
        confirm = bench_config(target.port, CONCURRENCY).services[0].checks[0]
        spacing = confirm.confirm * confirm.confirm_every
        tries = len(tried.run.results) - CHECKS
        verdict(
            f"a later run, its {CHECKS // HANGING_EVERY} hanging checks tried again ({tries} tries)",
            f"{tried.seconds:.2f} s",
            f"<= {warm.cycle.seconds + spacing + 1:.1f} s",
            tried.seconds <= warm.cycle.seconds + spacing + 1.0,
        )
        print(
            f"  (the run without tries, {warm.cycle.seconds:.2f} s, plus their spacing, {confirm.confirm} x "
            f"{confirm.confirm_every:g} s, plus 1 s)"
        )
        if os.environ.get("BENCH_PROBE_SEQUENTIAL", "1") == "0":
            return
        base = sequential(config)
        base_held = target.held()
    print(
        f"sequential: {base.seconds:.1f} s ({outcome_counts(base.run)}); "
        f"latency error against the true delay {describe(true_errors(base.run, base_held))}, "
        f"against 50 ms {describe(latency_errors(base.run))}"
    )
    print(
        f"ratio: {base.seconds / warm.cycle.seconds:.1f}x faster than one after another; a site's first run: "
        f"{base.seconds / cold.cycle.seconds:.1f}x",
        flush=True,
    )


if __name__ == "__main__":
    main()
