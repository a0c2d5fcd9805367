"""Probe-engine figures (issue 5): 1,000 checks against loopback targets, concurrent and one by one.

The targets run in their own processes (asyncio servers on 127.0.0.1): 950
paths answer after 50 ms, 50 never answer. A control process asks a target
with plain blocking sockets during the concurrent cycle, so the figures show
what the target itself did under that load, apart from our client.

    python -m bench probe        # or: make bench (runs every bench)

Printed, not asserted: cycle time, sequential time and their ratio, the
latency error (measured latency minus the targets' 50 ms) and the event-loop
lag during the cycle, each next to its goal.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig
from statusgen.outcomes import Outcome
from statusgen.probe import CheckResult, probe_all

CHECKS = 1000
HANGING_EVERY = 20                 # every 20th check hangs: 50 of 1000, 5%
DELAY_S = 0.050                    # what an answering target waits before it answers
TIMEOUT_S = 3.0                    # the checks' timeout; keeps the sequential baseline near 3.5 minutes
SPREAD_S = float(os.environ.get("BENCH_SPREAD", "1.5"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "100"))
TARGET_PROCESSES = int(os.environ.get("BENCH_TARGETS", "1"))
HANG_CAP_S = 30.0                  # a hanging target lets go after this, whatever the client does
TICK_S = 0.010                     # the lag ticker's sleep
CONTROL_EVERY_S = 0.020            # the control client's pause between requests
ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 16\r\n"
          b"Connection: close\r\n\r\nstatus: all good")
CTX = multiprocessing.get_context("spawn")


# -- the targets: their own processes, so they do not share our event loop ---

async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One connection: answer after DELAY_S, or hold it silently when the path starts with /hang."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        if head.split(b" ", 2)[1].startswith(b"/hang"):
            await asyncio.wait_for(reader.read(), HANG_CAP_S)   # until the client gives up
        else:
            await asyncio.sleep(DELAY_S)
            writer.write(ANSWER)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, IndexError):
        pass
    finally:
        writer.close()


async def _serve(ready: Connection, stop: Event) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, backlog=4096)
    ready.send(server.sockets[0].getsockname()[1])
    while not stop.is_set():
        await asyncio.sleep(0.1)
    server.close()


def serve_targets(ready: Connection, stop: Event) -> None:
    """Process entry point: one asyncio target server on a free loopback port."""
    asyncio.run(_serve(ready, stop))


@contextmanager
def target_processes(count: int) -> Iterator[list[int]]:
    """Start ``count`` target processes; yield their ports; stop them afterwards."""
    stop = CTX.Event()
    procs, ports = [], []
    for _ in range(count):
        mine, theirs = CTX.Pipe()
        proc = CTX.Process(target=serve_targets, args=(theirs, stop), daemon=True)
        proc.start()
        procs.append(proc)
        if not mine.poll(30):
            raise RuntimeError("a target process did not start")
        ports.append(mine.recv())
    try:
        yield ports
    finally:
        stop.set()
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()


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
    _raw_get(port)          # the target answers before we start
    try:
        yield timings
    finally:
        stop.set()
        if mine.poll(30):
            timings.extend(mine.recv())
        proc.join(5)


# -- the checks and the runs --------------------------------------------------

def bench_config(ports: Sequence[int], concurrency: int) -> Config:
    """1000 services with one check each; every HANGING_EVERY-th never answers."""
    services = []
    for i in range(CHECKS):
        path = f"/hang/{i}" if i % HANGING_EVERY == HANGING_EVERY - 1 else f"/ok/{i}"
        url = f"http://127.0.0.1:{ports[i % len(ports)]}{path}"
        check = CheckConfig(url, keyword="all good", timeout=TIMEOUT_S)
        services.append(ServiceConfig(f"s{i}", f"Service {i}", "bench", (check,)))
    site = SiteConfig(concurrency=concurrency)
    return Config(path=None, site=site, categories={"bench": "Bench"}, services=tuple(services))  # type: ignore[arg-type]


async def _ticker(lags: list[float], stop: asyncio.Event) -> None:
    """How late each asyncio.sleep(TICK_S) wakes, in ms, until ``stop`` is set."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(TICK_S)
        lags.append((loop.time() - before - TICK_S) * 1000.0)


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_seconds: float                 # CPU time of this process (the probing loop) during the run
    results: list[CheckResult]
    lags_ms: list[float]
    gc_ms: list[tuple[int, float]]     # (generation, ms) of each garbage collection during the run


@contextmanager
def gc_pauses() -> Iterator[list[tuple[int, float]]]:
    """(generation, ms) of every garbage collection during the block."""
    pauses: list[tuple[int, float]] = []
    started: list[float] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            pauses.append((info["generation"], (time.perf_counter() - started.pop()) * 1000))

    gc.callbacks.append(note)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(note)


async def _timed(config: Config, spread_s: float) -> Run:
    lags: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.create_task(_ticker(lags, stop))
    with gc_pauses() as pauses:
        start, cpu = time.perf_counter(), time.process_time()
        results = await probe_all(config, spread_s=spread_s)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    stop.set()
    await ticker
    return Run(seconds, cpu, results, lags, pauses)


def run_cycle(config: Config, spread_s: float) -> Run:
    """One cycle of the engine, with the lag ticker on the same event loop."""
    return asyncio.run(_timed(config, spread_s))


def run_sequential(config: Config) -> Run:
    """The baseline: the same engine and client settings, one check after another."""
    one_by_one = replace(config, site=replace(config.site, concurrency=1))
    return asyncio.run(_timed(one_by_one, 0.0))


# -- figures ------------------------------------------------------------------

def percentiles(values: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95 and max (nearest-rank)."""
    ordered = sorted(values)
    if not ordered:
        return (float("nan"),) * 3
    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))]
    return rank(0.50), rank(0.95), ordered[-1]


def latency_errors(results: Sequence[CheckResult]) -> list[float]:
    """Measured latency minus the targets' delay, in ms, over the checks that answered."""
    return [r.latency_ms - DELAY_S * 1000 for r in results if r.latency_ms is not None and r.up]


def describe(name: str, values: Sequence[float], goal: str) -> str:
    p50, p95, top = percentiles(values)
    return f"{name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {top:.1f} ms (n={len(values)}; {goal})"


def outcome_counts(results: Sequence[CheckResult]) -> str:
    counts: dict[Outcome, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    return ", ".join(f"{o.value} {n}" for o, n in sorted(counts.items()))


def main() -> None:
    load = os.getloadavg()[0]
    print(f"{CHECKS} checks ({CHECKS // HANGING_EVERY} hanging), targets answer after {DELAY_S * 1000:.0f} ms, "
          f"timeout {TIMEOUT_S:.0f} s, concurrency {CONCURRENCY}, starts spread over {SPREAD_S:.1f} s, "
          f"{TARGET_PROCESSES} target process(es), {os.cpu_count()} cores, load average {load:.2f}")
    with target_processes(TARGET_PROCESSES) as ports:
        config = bench_config(ports, CONCURRENCY)
        with control(ports[0]) as timings:
            cycle = run_cycle(config, SPREAD_S)
        print(f"concurrent: {outcome_counts(cycle.results)}")
        print(describe("  latency error (measured - 50 ms)", latency_errors(cycle.results), "goal p95 <= 5 ms"))
        print(describe("  event-loop lag (sleep 10 ms)", cycle.lags_ms, "reported"))
        print(describe("  target's own delay - 50 ms (raw sockets, other process)",
                       [t * 1000 - DELAY_S * 1000 for t in timings], "should be near 0"))
        print(f"  garbage collections: {len(cycle.gc_ms)}, of which generation 2: "
              f"{sum(1 for g, _ in cycle.gc_ms if g == 2)}; longest {max((ms for _, ms in cycle.gc_ms), default=0):.1f} ms")
        print(f"  CPU of the probing process: {cycle.cpu_seconds:.2f} s, "
              f"{cycle.cpu_seconds / CHECKS * 1000:.2f} ms a check")
        print(f"  cycle: {cycle.seconds:.2f} s (goal about timeout + 2 s = {TIMEOUT_S + 2:.1f} s)", flush=True)
        if os.environ.get("BENCH_NO_SEQUENTIAL"):
            return
        seq = run_sequential(config)
        print(f"sequential: {outcome_counts(seq.results)}")
        print(describe("  latency error (measured - 50 ms)", latency_errors(seq.results), "for comparison"))
        print(f"  sequential: {seq.seconds:.1f} s; ratio {seq.seconds / cycle.seconds:.1f}x (goal >= 40x)")
