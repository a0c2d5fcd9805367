"""``statusgen run --loop``: cycles forever, one every ``site.interval`` seconds.

The configuration is read as the loop starts: an invalid one fails the loop
as it fails ``statusgen run`` (exit 2), where restarting cannot help. Each
later cycle re-reads it (an invalid edit is logged and the last good
configuration is kept), takes the run lock, runs with its check starts spread
across the interval (``cycle.loop_spread``), and logs one line. Any failure
of a cycle is logged and the loop goes on.

SIGTERM (or SIGINT) stops the loop within moments, whatever it is doing:
between cycles it stops waiting; during a cycle it raises ``Stopping`` in
the main thread, which abandons the cycle (the checks in flight are
cancelled, the store's transaction rolls back, the generation being written
is never swapped in) and releases the lock. Either way the loop exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statusgen.config import Config
from statusgen.cycle import CycleReport, loop_spread, run_cycle
from statusgen.errors import StatusgenError
from statusgen.logs import event, printable
from statusgen.notes import checked_config
from statusgen.store import lock_store


class Stopping(KeyboardInterrupt):
    """SIGTERM or SIGINT during a cycle: abandon it and stop.

    A KeyboardInterrupt because that is the interruption the standard library lets through:
    asyncio re-raises it out of the event loop, and ``asyncio.run`` then cancels the checks still
    in flight, where it would log any other exception of a task and go on."""


@dataclass
class Loop:
    config_path: Path
    max_cycles: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    cycles: int = 0
    failures: int = 0
    cycling: bool = False  # a signal now abandons the cycle in progress

    def run(self) -> int:
        self._install_signals()
        config = checked_config(self.config_path)
        event(f"loop started with {self.config_path}")
        try:
            self._repeat(config)
            abandoned = ""
        except Stopping:
            abandoned = "; the cycle in progress was abandoned"
        event(
            f"loop stopped after {self.cycles} cycles ({self.failures} failed){abandoned}",
            cycles=self.cycles,
            failed=self.failures,
        )
        return 0

    def _repeat(self, config: Config) -> None:
        while True:
            started = time.monotonic()
            self._cycle(config)
            if self.max_cycles is not None and self.cycles >= self.max_cycles:
                return
            self.stop.wait(max(0.0, started + config.site.interval - time.monotonic()))
            if self.stop.is_set():
                return
            config = self._config(config)

    def _config(self, last: Config) -> Config:
        try:
            return checked_config(self.config_path)
        except StatusgenError as exc:
            event(
                f"configuration not reloaded, keeping the last good one: {printable(str(exc))}",
                logging.ERROR,
                error=str(exc),
            )
            return last

    def _cycle(self, config: Config) -> None:
        self.cycling = True
        try:
            if self.stop.is_set():  # a signal came just before: it found no cycle to abandon
                return
            self._attempt(config)
            self.cycles += 1
        finally:
            self.cycling = False

    def _attempt(self, config: Config) -> None:
        try:
            with lock_store(config.site.store, config.site.interval):
                report = run_cycle(config, spread_s=loop_spread(config))
            event(report.line(), **report_fields(report))
        except StatusgenError as exc:
            self.failures += 1
            event(f"cycle failed: {exc}", logging.ERROR, error=str(exc))
        except Exception as exc:  # the loop must survive any single failure
            self.failures += 1
            event(
                f"cycle failed unexpectedly: {type(exc).__name__}: {exc}",
                logging.ERROR,
                error=f"{type(exc).__name__}: {exc}",
            )

    def _install_signals(self) -> None:
        def handler(signum: int, _frame: object) -> None:
            name = signal.Signals(signum).name
            self.stop.set()
            if not self.cycling:
                event(f"received {name}; stopping")
                return
            self.cycling = False  # once: a second signal must not interrupt the unwinding
            event(f"received {name}; abandoning the cycle in progress and stopping")
            raise Stopping

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def report_fields(report: CycleReport) -> dict[str, Any]:
    b = report.build
    return {
        "run": report.run_id,
        "checks": report.checks,
        "failed": report.failed,
        "probe_s": round(report.probe_ms / 1000, 3),
        "incident_changes": report.opened_or_changed,
        "files": b.stats.files,
        "written": b.stats.written,
        "kept": len(b.stats.kept),
        "store_s": round(b.gather_ms / 1000, 3),
        "render_s": round(b.render_ms / 1000, 3),
    }
