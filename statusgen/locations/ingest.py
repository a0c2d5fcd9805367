"""What each ``statusgen run`` takes from the inbox: the batches that arrived since, each verified
(``batches.decode``), stored, and removed from the inbox, oldest first. A refused batch is logged
in one line naming its location and the reason, remembered for health and ``statusgen
locations``, and removed: it never stops the run. A batch taken before (a replay, or one a run
stored but could not remove) changes nothing and is removed.

The inbox is touched for batches only: a name that is not a batch's under a configured location
is never read nor removed, only counted (health says how many). And a run gives the inbox a
share of its interval (``BUDGET_SHARE``): what it has not reached by then waits for the next run,
which starts again from the oldest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from statusgen.batches import MAX_BYTES, NAME, BatchRefused, Checks, Expect, decode
from statusgen.config import CheckConfig, Config
from statusgen.decide.vantage import judge_vantage
from statusgen.inbox import Inbox, InboxError, config_inbox, location_keys
from statusgen.store import RAW_RETENTION_S, Store
from statusgen.store.locations import InboxListing
from statusgen.timeutil import human_duration

log = logging.getLogger("statusgen.locations")
MAX_PER_RUN = 10_000  # batches one run takes; more wait for the next run
BUDGET_SHARE = 0.1  # of site.interval: the time a run spends on the inbox at most
MIN_BUDGET_S = 5.0  # ...but never less: a short interval still takes a few batches


@dataclass
class Ingested:
    taken: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    replayed: list[str] = field(default_factory=list)
    not_batches: int = 0  # files in the inbox that are not batches: left as they are
    left: int = 0  # batches left for the next run: past the time budget or MAX_PER_RUN
    error: str | None = None  # why the inbox could not be read; the run goes on without it


def expectations(config: Config, now: datetime) -> Expect:
    """What a batch must be to be taken: signed with its location's key, from a configured
    location, sent within the raw results' retention, holding only checks it runs there, with
    details that are their conditions."""

    def runs_at(location: str) -> dict[str, Checks]:
        return {
            s.slug: {i: _conditions(c) for i, c in enumerate(s.checks) if c.runs_at(location)} for s in config.services
        }

    return Expect(
        keys=location_keys(config),
        checks={loc.name: runs_at(loc.name) for loc in config.locations},
        now=now,
        max_age=timedelta(seconds=RAW_RETENTION_S),
        canaries={i: _conditions(c) for i, c in enumerate(config.canaries)},
    )


def _conditions(check: CheckConfig) -> frozenset[str]:
    """What an agent's result of ``check`` may give as its detail: a condition that failed."""
    return frozenset(c.text() for c in check.conditions)


def budget_s(config: Config) -> float:
    return max(MIN_BUDGET_S, BUDGET_SHARE * config.site.interval)


def ingest(
    config: Config,
    store: Store,
    now: datetime,
    inbox: Inbox | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Ingested:
    """Take what the inbox holds (``inbox``: the configuration's by default), within the budget."""
    done = Ingested()
    if not config.locations:
        return done
    inbox = inbox or config_inbox(config)
    expect = expectations(config, now)
    try:
        listed = inbox.listing()
    except InboxError as exc:
        log.warning("%s", exc)
        done.error = str(exc)
        return done
    batches = [
        (m["at"], name, size) for name, size in listed if (m := NAME.fullmatch(name)) and m["location"] in expect.keys
    ]
    done.not_batches = len(listed) - len(batches)
    deadline = clock() + budget_s(config)
    for n, (_, name, size) in enumerate(sorted(batches)):
        if n >= MAX_PER_RUN or clock() > deadline:
            done.left = len(batches) - n
            break
        try:
            _take(name, size, inbox, store, expect, config, now, done)
            inbox.remove(name)
        except InboxError as exc:  # what it could not remove is taken again next run: it changes nothing then
            log.warning("%s", exc)
            done.error = str(exc)
            break
    before = store.last_listing()
    store.note_listing(InboxListing(now, done.not_batches, done.left))
    if done.not_batches and (before is None or before.not_batches != done.not_batches):  # said once, not each run
        log.warning("inbox: %d files that are not batches, left as they are", done.not_batches)
    if done.taken or done.refused or done.replayed:
        log.info(
            "inbox: %d batches taken, %d refused, %d taken before",
            len(done.taken),
            len(done.refused),
            len(done.replayed),
        )
    if done.left:
        log.warning("inbox: %d batches left for the next run (this run's time for the inbox is spent)", done.left)
    return done


def _take(
    name: str,
    size: int | None,
    inbox: Inbox,
    store: Store,
    expect: Expect,
    config: Config,
    now: datetime,
    done: Ingested,
) -> None:
    location = name.split("/", 1)[0]
    try:
        if size is not None and size > MAX_BYTES:  # refused by its listed size: never read
            raise BatchRefused(f"larger than {MAX_BYTES >> 20} MiB")
        batch = decode(name, inbox.get(name), expect)
    except BatchRefused as exc:
        reason = str(exc)
        log.warning("batch refused: location %r, %r: %s", location, name, reason)
        store.refuse_batch(location, name, reason, now)
        done.refused.append((name, reason))
        return
    vantage = judge_vantage(batch.results, batch.canaries, config.site)
    if vantage.suspect:  # as this host's own: its failures are set aside
        log.warning("location %r: its own path looks at fault: %s", batch.location, vantage.reason)
    taken = store.take_batch(batch, now, vantage.suspect)
    (done.taken if taken else done.replayed).append(name)
    if taken:
        lag = human_duration(now - batch.sent_at)
        log.info(
            "batch taken: location %r, %s: %d results, %s after it was sent", location, name, len(batch.results), lag
        )
