"""Probe: the worker processes that share a run's checks.

One event loop runs out of CPU at a few hundred checks a second on a small
machine, and a busy loop is late to read answers, which shows as latency.
With ``processes`` > 1 the checks are dealt out, in turn, to that many worker
processes, each with its own loop; they keep one schedule (time.monotonic is
the same clock in every process). A worker is ``python -c`` running
``worker_main``, fed and answered over its stdin and stdout in pickled frames.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from statusgen import logs
from statusgen.probe import ProbeRun, Share, ready_to_probe, run_share
from statusgen.timeutil import utcnow

WORKER_START_DEADLINE_S = 30.0  # a worker not ready by then is left out; its checks run in the main process
WORKER_START_MARGIN_S = 0.03    # from "all ready" to the first start: time to send each worker its share
WORKER_SLACK_S = 30.0           # a worker silent this long after its last check should have ended is given up
WORKER_EXIT_S = 1.0             # a worker not ended this long after its answer (or its failure) is killed
MAX_FRAME = 1 << 28             # bytes; a worker announcing more is talking nonsense

WORKER_CODE = "from statusgen.probe.workers import worker_main; worker_main()"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def _frame(value: object) -> bytes:
    data = pickle.dumps(value)
    return len(data).to_bytes(8, "big") + data


async def _read_frame(stream: asyncio.StreamReader) -> Any:
    size = int.from_bytes(await stream.readexactly(8), "big")
    if size > MAX_FRAME:
        raise WorkerError(f"the probe worker announced {size} bytes")
    return pickle.loads(await stream.readexactly(size))


def _read_frame_from(stream: BinaryIO) -> Any:
    size = int.from_bytes(stream.read(8), "big")
    return pickle.loads(stream.read(size))


async def _work(results: BinaryIO) -> None:
    tls = await ready_to_probe()
    results.write(_frame("ready"))
    results.flush()
    share, start_at = await asyncio.to_thread(_read_frame_from, sys.stdin.buffer)
    run = await run_share(share, start_at, tls)
    results.write(_frame(run))
    results.flush()
    os._exit(0)                        # nothing left to clean up; the parent is waiting for the exit


def worker_main() -> None:
    """A worker process: warm up, say "ready", probe the share it is sent, send back the run."""
    results = sys.stdout.buffer
    sys.stdout = sys.stderr            # nothing but frames may reach the parent on stdout
    asyncio.run(_work(results))


def _longest(share: Share) -> float:
    """Seconds from the start until the share's last check has surely ended."""
    return max((o + t.check.timeout for o, t in zip(share.offsets, share.targets, strict=True)), default=0.0)


class WorkerError(Exception):
    """A worker process said something other than what it should have."""


class Worker:
    """One worker process, from start to its run's results."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> Worker:
        """``python -P -c WORKER_CODE``: this interpreter and this statusgen, whatever the current directory."""
        if not sys.executable:
            raise WorkerError("no Python interpreter to start a probe worker with")
        path = os.pathsep.join(p for p in (str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-P", "-c", WORKER_CODE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path}, start_new_session=True)   # Ctrl-C is the parent's to handle
        return cls(process)

    async def ready(self) -> None:
        assert self.process.stdout is not None
        if await _read_frame(self.process.stdout) != "ready":
            raise WorkerError("the probe worker did not say it was ready")

    async def run(self, share: Share, start_at: float) -> ProbeRun:
        """Send the share; its run, or TimeoutError well after its last check should have ended."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(_frame((share, start_at)))
        await self.process.stdin.drain()
        async with asyncio.timeout_at(start_at + _longest(share) + WORKER_SLACK_S):
            run = await _read_frame(self.process.stdout)
        if not isinstance(run, ProbeRun):
            raise WorkerError("the probe worker sent something other than its results")
        return run

    async def stop(self) -> None:
        """Wait for the worker to end (it ends by itself once it has answered), else kill it.

        Never kill first: killing polls, which may reap a worker that just ended
        and leave asyncio's child watcher to complain about an unknown child.
        """
        try:
            async with asyncio.timeout(WORKER_EXIT_S):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


WORKER_ERRORS = (OSError, EOFError, WorkerError, asyncio.IncompleteReadError, pickle.UnpicklingError)


async def _started(count: int, deadline_s: float) -> list[Worker | None]:
    """``count`` workers, ready; None in place of any that failed to start in time."""
    async def one() -> Worker | None:
        worker = None
        try:
            worker = await Worker.start()
            async with asyncio.timeout(deadline_s):
                await worker.ready()
            return worker
        except (*WORKER_ERRORS, TimeoutError) as exc:
            logs.event(f"probe worker did not start ({exc!r}); its checks run in the main process",
                       logging.WARNING)
            if worker is not None:
                await worker.stop()
            return None
    return list(await asyncio.gather(*(one() for _ in range(count))))


async def _run_somewhere(worker: Worker | None, share: Share, start_at: float) -> ProbeRun:
    """The share's run by its worker, or by this process when there is none or it fails."""
    if worker is not None:
        try:
            return await worker.run(share, start_at)
        except (*WORKER_ERRORS, TimeoutError) as exc:
            logs.event(f"probe worker failed ({exc!r}); its checks run again in the main process",
                       logging.WARNING)
    tls = await ready_to_probe()
    return await run_share(share, max(start_at, time.monotonic()), tls)


async def in_workers(parts: list[Share], clock: Callable[[], datetime]) -> list[ProbeRun]:
    """Each share in a worker process of its own, on one schedule."""
    workers = await _started(len(parts), WORKER_START_DEADLINE_S)
    try:
        start_at = time.monotonic() + WORKER_START_MARGIN_S
        shift = clock() - utcnow()         # workers read the real clock; results follow the given one
        runs = await asyncio.gather(*(_run_somewhere(w, s, start_at) for w, s in zip(workers, parts)))
    finally:
        await asyncio.gather(*(w.stop() for w in workers if w is not None))
    return [ProbeRun([replace(r, ts=r.ts + shift) for r in run.results], run.loop_lag) for run in runs]
