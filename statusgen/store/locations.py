"""The results probe agents deliver (``statusgen.locations``), keyed by location, service, check
and time, so that a batch taken twice changes nothing; each batch taken, and each refused (apart:
a refusal never changes what is known of the batches taken), for ``statusgen locations`` and
health, all kept as long as the raw results; and what the inbox's last listing held besides."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from statusgen import latency
from statusgen.batches import Batch
from statusgen.model import EXCLUDED_FLAG, CheckResult, Outcome
from statusgen.store.failures import guarded_method
from statusgen.timeutil import from_epoch, to_epoch


@dataclass(frozen=True)
class BatchRecord:
    """A batch as the store remembers it: taken (``refused`` None) or refused, and why."""

    location: str
    name: str
    sent_at: datetime
    received_at: datetime
    results: int
    refused: str | None = None


def add_batch(db: sqlite3.Connection, batch: Batch, received_at: datetime, suspect: bool = False) -> bool:
    """Store a verified batch's results; False (and nothing changed) when it was taken before.
    ``suspect``: its location's own path looked at fault (its canaries): its failed results are
    kept set aside (``excluded``), as this host's are then."""
    new = db.execute(
        "INSERT OR IGNORE INTO batches VALUES (?,?,?,?,?,NULL)",
        (batch.location, batch.name, to_epoch(batch.sent_at), to_epoch(received_at), len(batch.results)),
    ).rowcount
    db.executemany(
        "INSERT OR IGNORE INTO location_results VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                batch.location,
                r.service,
                r.check_index,
                to_epoch(r.ts),
                r.outcome.value,
                r.latency_ms,
                r.http_status,
                int(r.slow),
                r.detail,
                EXCLUDED_FLAG if suspect and not r.up else None,
            )
            for r in batch.results
        ],
    )
    return bool(new)


def add_refusal(db: sqlite3.Connection, location: str, name: str, reason: str, received_at: datetime) -> None:
    db.execute("INSERT INTO refusals VALUES (?,?,?,?)", (location, name, to_epoch(received_at), reason))


@dataclass(frozen=True)
class InboxListing:
    """What the last run's listing of the inbox held besides batches, and what it left for later."""

    listed_at: datetime
    not_batches: int  # files that are not batches: left as they are
    left_for_next: int  # batches past the run's time for the inbox


def note_listing(db: sqlite3.Connection, listing: InboxListing) -> None:
    db.execute(
        "INSERT OR REPLACE INTO inbox_listing VALUES (1,?,?,?)",
        (to_epoch(listing.listed_at), listing.not_batches, listing.left_for_next),
    )


def last_listing(db: sqlite3.Connection) -> InboxListing | None:
    row = db.execute("SELECT listed_at, not_batches, left_for_next FROM inbox_listing").fetchone()
    return None if row is None else InboxListing(from_epoch(row[0]), row[1], row[2])


def taken_names(db: sqlite3.Connection, names: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these (location, name) were taken before."""
    return {
        key
        for key in names
        if db.execute("SELECT 1 FROM batches WHERE location = ? AND name = ? AND refused IS NULL", key).fetchone()
    }


def location_results(db: sqlite3.Connection, since: datetime) -> dict[str, list[CheckResult]]:
    """Each location's results from ``since`` on, oldest first, but those set aside."""
    out: dict[str, list[CheckResult]] = {}
    for location, service, check, ts, outcome, ms, status, slow, detail in db.execute(
        "SELECT location, service, check_index, ts, outcome, latency_ms, http_status, slow, detail "
        "FROM location_results WHERE ts >= ? AND flag IS NULL ORDER BY ts",
        (to_epoch(since),),
    ):
        result = CheckResult(service, check, from_epoch(ts), Outcome(outcome), ms, status, bool(slow), None, detail)
        out.setdefault(location, []).append(result)
    return out


def last_batches(db: sqlite3.Connection) -> dict[str, BatchRecord]:
    """Each location's newest batch taken (by when it was sent)."""
    out: dict[str, BatchRecord] = {}
    for location, name, sent, received, results in db.execute(
        "SELECT location, name, sent_at, received_at, results FROM batches ORDER BY sent_at, received_at"
    ):
        out[location] = BatchRecord(location, name, from_epoch(sent), from_epoch(received), results)
    return out


def last_refusals(db: sqlite3.Connection) -> dict[str, BatchRecord]:
    """Each location's newest refusal (by when it was refused)."""
    out: dict[str, BatchRecord] = {}
    for location, name, received, reason in db.execute(
        "SELECT location, name, received_at, reason FROM refusals ORDER BY received_at, rowid"
    ):
        at = from_epoch(received)
        out[location] = BatchRecord(location, name, at, at, 0, reason)
    return out


def refusals(db: sqlite3.Connection, since: datetime) -> dict[str, int]:
    """How many batches of each location were refused from ``since`` on."""
    rows = db.execute(
        "SELECT location, count(*) FROM refusals WHERE received_at >= ? GROUP BY location", (to_epoch(since),)
    )
    return dict(rows)


def location_day(db: sqlite3.Connection, service: str, start: datetime, end: datetime) -> dict[str, dict[str, Any]]:
    """Each location's results of ``service`` in [start, end), but those set aside: how many, how
    many failed, and the latency percentiles of the good ones (as the buckets make them)."""
    found: dict[str, dict[str, Any]] = {}
    hists: dict[str, latency.Histogram] = {}
    for location, outcome, ms in db.execute(
        "SELECT location, outcome, latency_ms FROM location_results "
        "WHERE service = ? AND ts >= ? AND ts < ? AND flag IS NULL ORDER BY location",
        (service, to_epoch(start), to_epoch(end)),
    ):
        seen = found.setdefault(location, {"checks": 0, "failed": 0})
        seen["checks"] += 1
        if outcome != Outcome.OK.value:
            seen["failed"] += 1
        elif ms is not None:
            latency.add(hists.setdefault(location, {}), [ms])
    for location, seen in found.items():
        hist = hists.get(location, {})
        seen["latency_p50_ms"] = latency.percentile(hist, 0.5)
        seen["latency_p95_ms"] = latency.percentile(hist, 0.95)
    return found


def prune_locations(db: sqlite3.Connection, cut: int) -> None:
    db.execute("DELETE FROM location_results WHERE ts < ?", (cut,))
    db.execute("DELETE FROM batches WHERE sent_at < ?", (cut,))
    db.execute("DELETE FROM refusals WHERE received_at < ?", (cut,))


class LocationStore:
    """The store's methods for the locations (``Store`` has them): each SQLite error is a StoreError."""

    db: sqlite3.Connection
    path: Path

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    @guarded_method
    def take_batch(self, batch: Batch, received_at: datetime, suspect: bool = False) -> bool:
        with self.transaction() as db:
            return add_batch(db, batch, received_at, suspect)

    @guarded_method
    def refuse_batch(self, location: str, name: str, reason: str, received_at: datetime) -> None:
        with self.transaction() as db:
            add_refusal(db, location, name, reason, received_at)

    @guarded_method
    def taken_batches(self, names: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        return taken_names(self.db, names)

    @guarded_method
    def location_results(self, since: datetime) -> dict[str, list[CheckResult]]:
        return location_results(self.db, since)

    @guarded_method
    def fresh_by_service(self, since: datetime, order: Iterable[str]) -> dict[str, dict[str, list[CheckResult]]]:
        """The other locations' results from ``since`` on, by service, then by location in ``order``."""
        found = location_results(self.db, since)
        out: dict[str, dict[str, list[CheckResult]]] = {}
        for location in order:
            for r in found.get(location, []):
                out.setdefault(r.service, {}).setdefault(location, []).append(r)
        return out

    @guarded_method
    def last_batches(self) -> dict[str, BatchRecord]:
        return last_batches(self.db)

    @guarded_method
    def last_refusals(self) -> dict[str, BatchRecord]:
        return last_refusals(self.db)

    @guarded_method
    def note_listing(self, listing: InboxListing) -> None:
        with self.transaction() as db:
            note_listing(db, listing)

    @guarded_method
    def last_listing(self) -> InboxListing | None:
        return last_listing(self.db)

    @guarded_method
    def location_day(self, service: str, start: datetime, end: datetime) -> dict[str, dict[str, Any]]:
        return location_day(self.db, service, start, end)

    @guarded_method
    def refusals(self, since: datetime) -> dict[str, int]:
        return refusals(self.db, since)
