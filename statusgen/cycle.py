"""One collection cycle: probe, store, decide, render.

``decide_cycle`` is pure (the decisions of a whole cycle); ``run_cycle`` does
the I/O around it, in the order of the pipeline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

from statusgen.config import Config
from statusgen.decide.confirm import first_tries, last_tries, worth_confirming
from statusgen.decide.health import RunRecord
from statusgen.decide.reports import run_credits
from statusgen.decide.run import (
    decide_cycle,
)
from statusgen.decide.state import ServiceState
from statusgen.decide.vantage import judge_vantage
from statusgen.inbox import check_inbox_place
from statusgen.locations.ingest import ingest
from statusgen.model import SET_ASIDE, CheckId, CheckResult, Outcome
from statusgen.notes import check_notes
from statusgen.notify.outbox import deliver, queued, run_events
from statusgen.probe import CheckTarget, Confirm, probe_all, targets
from statusgen.progress import Progress, quiet
from statusgen.render.build import BuildResult, build
from statusgen.render.tree import clear_partial, recorded_store, remember_store
from statusgen.store import Cycle, Store
from statusgen.subscribe.outbox import mail_events
from statusgen.subscribe.run import mail_turn
from statusgen.timeutil import utcnow
from statusgen.vendors.model import VendorObservation, VendorRow
from statusgen.vendors.stage import fetch_vendors


@dataclass(frozen=True)
class CycleReport:
    run_id: int
    checks: int
    failed: int
    probe_ms: float
    build: BuildResult
    opened_or_changed: int

    def line(self) -> str:
        b = self.build
        return (
            f"run {self.run_id}: {self.checks} checks ({self.failed} failed) probed in "
            f"{self.probe_ms / 1000:.2f} s; {self.opened_or_changed} incident changes; {b.line()}"
        )


async def collect(
    config: Config,
    vendor_rows: dict[str, VendorRow],
    clock: Callable[[], datetime],
    spread_s: float = 0.0,
    first: Collection[CheckId] = frozenset(),
    confirm: Confirm | None = None,
) -> tuple[list[CheckResult], list[CheckResult], dict[str, tuple[VendorRow, VendorObservation]]]:
    """Our checks and the canaries, in one run (their starts spread over ``spread_s`` seconds,
    those in ``first`` first, those ``confirm`` wants tried again within the run), and the vendor
    sources."""
    active = [t for t in targets(config) if not config.by_slug[t.service].paused]
    canaries = [CheckTarget("", i, c) for i, c in enumerate(config.canaries)]
    results, fetched = await asyncio.gather(
        probe_all(config, active + canaries, clock, spread_s, first, confirm=confirm),
        fetch_vendors(config, vendor_rows, clock),
    )
    return [r for r in results if r.service], [r for r in results if not r.service], fetched


def timed_out_before(states: Mapping[str, ServiceState]) -> frozenset[CheckId]:
    """The checks whose last result was a timeout: a run starts them first (``probe.start_order``)."""
    return frozenset(
        (slug, e.check - 1) for slug, st in states.items() for e in st.evidence if e.outcome == Outcome.TIMEOUT.value
    )


SPREAD_PER_CHECK_S = 0.004  # a run's starts are spread over 4 s per 1,000 checks by default
SPREAD_PAST_TIMEOUT_S = 1.0  # ...or until this long after the timeout of the checks that start first


def run_spread(config: Config, first: Collection[CheckId] = frozenset()) -> float:
    """How long a single run spreads its check starts: site.spread, by default 4 s per 1,000
    checks (at most 10 s), which keeps the event loop of a small machine well under busy (an
    answer that waits for a busy loop is timed late; docs/performance.md has the figures).
    When checks that timed out last time start first (``first``), the run lasts about their
    timeout anyway: the others are then spread until SPREAD_PAST_TIMEOUT_S after it, which makes
    the run little longer and the starts less bunched."""
    if config.site.spread is not None:
        return config.site.spread
    active = [s for s in config.services if not s.paused]
    spread = SPREAD_PER_CHECK_S * sum(len(s.checks) for s in active)
    held = [c.timeout for s in active for i, c in enumerate(s.checks) if (s.slug, i) in first]
    if held:
        spread = max(spread, max(held) + SPREAD_PAST_TIMEOUT_S)
    return min(10.0, spread)


def loop_spread(config: Config) -> float:
    """How long ``--loop`` spreads a cycle's check starts: most of the interval, leaving room for
    the slowest check to time out and for the build, so that cycles do not overlap."""
    slowest = max((c.timeout + c.confirm * c.confirm_every for s in config.services for c in s.checks), default=0.0)
    return max(0.0, min(0.8 * config.site.interval, config.site.interval - slowest - 5.0))


def from_elsewhere(config: Config, store: Store, now: datetime) -> dict[str, dict[str, list[CheckResult]]]:
    """The batches that arrived from the other locations, taken into the store, and their fresh
    results (within site.stale_after), by service and location; none on a one-location site."""
    if not config.locations:
        return {}
    ingest(config, store, now)
    since = now - timedelta(seconds=config.site.stale_after_s)
    return store.fresh_by_service(since, [loc.name for loc in config.locations])


def open_store(config: Config, new_store: bool = False) -> Store:
    """The store of the site, once what a build left unfinished is gone (on a shared disk, it may
    be what keeps the store from being written). Unless ``new_store``, a store the site was built
    from must still hold its data. Call with the run lock held."""
    clear_partial(config.site.output)
    # Earlier versions kept the closed part of the histories in this file; nothing reads it now.
    legacy_cache = config.site.store.with_name(config.site.store.name + ".cache")
    with suppress(OSError):  # a leftover: never a reason not to run
        legacy_cache.unlink(missing_ok=True)
    expected = not new_store and recorded_store(config.site.output) == config.site.store.resolve()
    return Store(config.site.store, expected=expected)


def run_cycle(
    config: Config, clock: Callable[[], datetime] = utcnow, spread_s: float | None = None, new_store: bool = False
) -> CycleReport:
    if config.locations:  # before anything is written: an inbox among our own files is refused
        check_inbox_place(config)
    store = open_store(config, new_store)
    try:
        started = clock()
        t0 = time.perf_counter()
        check_notes(config, store.incident_ids())  # a bad notes folder stops the run before it probes
        states = store.states()  # read once: only this run writes them (statusgen run holds the lock)
        first = timed_out_before(states)
        spread = run_spread(config, first) if spread_s is None else spread_s
        wanted = worth_confirming(states)
        tries, canaries, fetched = asyncio.run(collect(config, store.vendor_rows(), clock, spread, first, wanted))
        probe_ms = (time.perf_counter() - t0) * 1000
        now = clock()
        elsewhere = from_elsewhere(config, store, now)
        vantage = judge_vantage(first_tries(tries), canaries, config.site)  # the run as it first saw it
        observations = {slug: obs for slug, (_, obs) in fetched.items()}
        before = store.open_incidents()
        last_run = store.last_finished_run()
        counted_since = last_run.finished_at if last_run else None
        decisions = decide_cycle(
            config, states, before, tries, now, observations, vantage, elsewhere, counted_since=counted_since
        )
        results = last_tries(tries)
        failed = sum(1 for r in results if not r.up)
        vendor_failed = sum(1 for o in observations.values() if o.outcome is not Outcome.OK)
        excluded = sum(1 for r in decisions.results if r.flag in SET_ASIDE)
        run = RunRecord(
            0,
            started,
            now,
            len(results),
            failed,
            len(fetched),
            vendor_failed,
            round(probe_ms, 1),
            vantage.reason,
            vantage.canaries_attempted,
            vantage.canaries_failed,
            excluded,
        )
        rows = [row for row, _ in fetched.values()]
        statuses = {slug: state.status.value for slug, state in decisions.states.items()}
        events = run_events(store, config, before, decisions.incidents, observations, statuses, now)
        months = run_credits(decisions.states, decisions.results, last_run, now, config.site.interval)
        told, mail = queued(config, events, now), mail_events(config, events)
        cycle = Cycle(run, decisions.results, decisions.states, decisions.incidents, rows, told, months, mail)
        run_id = store.save_cycle(cycle)
        store.prune(now, config.site.report_months)
        built = build(store, config, now)
        remember_store(config.site.output, config.site.store)
        deliver(store, config, now)  # after the build: a message's link leads to a page that tells it
        mail_turn(store, config, now)  # the subscribers' mailbox read, then their messages sent
        return CycleReport(run_id, len(results), failed, probe_ms, built, len(decisions.incidents))
    finally:
        store.close()


def rebuild(
    config: Config, clock: Callable[[], datetime] = utcnow, new_store: bool = False, progress: Progress = quiet
) -> BuildResult:
    store = open_store(config, new_store)
    try:
        built = build(store, config, clock(), progress=progress)
        remember_store(config.site.output, config.site.store)
        return built
    finally:
        store.close()
