"""``statusgen run --loop``: cycles forever, one every ``site.interval`` seconds.

Each cycle re-reads the configuration (an invalid edit is logged and the last
good configuration is kept), takes the run lock, runs with its check starts
spread across the interval (``cycle.loop_spread``), and logs one line. Any
failure of a cycle is logged and the loop goes on. SIGTERM (or SIGINT) lets
the cycle in progress finish, then the loop exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statusgen.config import Config, load_config
from statusgen.cycle import CycleReport, loop_spread, run_cycle
from statusgen.errors import StatusgenError
from statusgen.lock import run_lock
from statusgen.logs import event, printable


@dataclass
class Loop:
    config_path: Path
    max_cycles: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    cycles: int = 0
    failures: int = 0

    def _config(self, last: Config | None) -> Config | None:
        try:
            return load_config(self.config_path)
        except StatusgenError as exc:
            event(
                f"configuration not reloaded, keeping the last good one: {printable(str(exc))}",
                logging.ERROR,
                error=str(exc),
            )
            return last

    def _cycle(self, config: Config) -> None:
        try:
            with run_lock(config.site.store, wait_s=config.site.interval):
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

    def run(self) -> int:
        self._install_signals()
        config: Config | None = None
        event(f"loop started with {self.config_path}")
        while not self.stop.is_set():
            started = time.monotonic()
            config = self._config(config)
            if config is not None:
                self._cycle(config)
            self.cycles += 1
            if self.max_cycles is not None and self.cycles >= self.max_cycles:
                break
            interval = config.site.interval if config else 60.0
            self.stop.wait(max(0.0, started + interval - time.monotonic()))
        event(
            f"loop stopped after {self.cycles} cycles ({self.failures} failed)",
            cycles=self.cycles,
            failed=self.failures,
        )
        return 0

    def _install_signals(self) -> None:
        def handler(signum: int, _frame: object) -> None:
            event(f"received {signal.Signals(signum).name}; stopping after the cycle in progress")
            self.stop.set()

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
