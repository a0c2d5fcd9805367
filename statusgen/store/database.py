"""The embedded store: one SQLite file, in WAL mode.

The schema is built by numbered migrations (``migrations``), so an old store
upgrades in place. A run's writes (its results, the buckets they feed, the
decided states, incidents and the run record) go in one transaction.

Tables:
  runs            one row per collection run
  results         raw check results, kept for RAW_RETENTION_S, dropped by whole hours (the service
                  record shows the last day)
  buckets         aggregates per service at each published resolution, kept only for its range;
                  a service's buckets of one resolution lie together (the key starts with the
                  service), so a history reads its range in a few pages
  service_state   the decided state of each service (JSON)
  incidents       statusgen's own incidents (JSON record, plus columns to query by)
  vendor_sources  each vendor source's last fetch and last good view
  result_hours    per service and hour, the published rows of its results, deflated: rewritten
                  with every write of its results, so that a build reads a service's last day
                  in a few pages (``last_day_json``)
  notifications   the outbox: each event due to each notifier, written with the run that decided
                  it, and how its sending went (``statusgen.notify``)
  months          per service and UTC month, the seconds of each status (``months``)
  subscribers     visitors subscribed by email, and what is sent them (``subscribers``):
  mail_events     mail_outbox, mail_read
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from statusgen import latency
from statusgen.decide.health import RunRecord
from statusgen.decide.history import Bucket, Sums
from statusgen.decide.incidents import Incident
from statusgen.decide.reports import Credits, Tally, month_of, months_before
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.errors import StoreError
from statusgen.i18n import kept_words, words_of
from statusgen.model import CheckResult, Outcome
from statusgen.store.failures import (
    DECODING,
    check_once,
    damaged,
    guarded_method,
    must_hold_data,
    store_failure,
)
from statusgen.store.hours import HOUR, ROW_SQL, SPAN_ROWS, inflated, write_all_hours, write_hours
from statusgen.store.locations import LocationStore, prune_locations
from statusgen.store.migrations import current_version, migrate, must_be_current
from statusgen.store.months import add_months, prune_months, read_months
from statusgen.store.records import (
    BucketRow,
    Cycle,
    Notification,
    NotificationKey,
    SendOutcome,
    aggregate,
    with_percentiles,
)
from statusgen.store.subscribers import SubscriberStore, prune_mail, queue_mail
from statusgen.timeutil import floor_to, from_epoch, to_epoch
from statusgen.vendors.model import VendorRow

# resolution (seconds) -> how long its buckets are kept (seconds)
RESOLUTIONS: dict[int, int] = {300: 86400 + 3600, 3600: 8 * 86400, 21600: 31 * 86400, 86400: 91 * 86400}
RAW_RETENTION_S = 2 * 86400

INSERT_RESULT = (
    "INSERT INTO results (service, check_index, ts, outcome, latency_ms, http_status, slow, flag, run_id) "
    "VALUES (?,?,?,?,?,?,?,?,?)"
)
RUN_COLUMNS = (
    "id, started_at, finished_at, checks_attempted, checks_failed, vendors_attempted, vendors_failed, "
    "probe_ms, note, canaries_attempted, canaries_failed, results_excluded"
)


#: The columns of a bucket as the store writes them (``simulate``'s prepared rows hold them in this order).
BUCKET_COLUMNS = "res, start, service, up, down, slow, maintenance, excluded, hist, p50, p95"


def _last_day_split(since: datetime) -> tuple[int, int]:
    """Where a last day from ``since`` reads its rows (``since`` to the first whole hour, from the
    results) and where its hourly blocks begin: both as epoch seconds."""
    t = to_epoch(since)
    return t, -(-t // HOUR) * HOUR


NOTIFICATION_RETENTION_S = 30 * 86400  # sent or abandoned events are kept this long (health counts them)


class Store(LocationStore, SubscriberStore):
    """The store at ``path``. ``expected``: a previous run recorded a store there, so a missing or
    empty file means its history was lost, not that the site is new (``StoreError``).

    ``Store.reader(path)`` opens it to read only: a render worker reads what the run wrote, and
    must not change the schema, the journal mode or the data."""

    def __init__(self, path: Path, expected: bool = False, *, read_only: bool = False):
        self.path = path
        if expected or read_only:
            must_hold_data(path)
        try:
            if read_only:
                self.db = sqlite3.connect(
                    f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=30
                )
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        except (sqlite3.Error, OSError) as exc:
            raise store_failure(path, exc, "open the store") from None
        try:
            check_once(self.db, path)
            if read_only:
                self.db.execute("PRAGMA query_only=ON")
                must_be_current(self.db, path)
            else:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute("PRAGMA foreign_keys=ON")
                migrate(self.db)
        except StoreError:
            self.db.close()
            raise
        except sqlite3.Error as exc:
            self.db.close()
            raise store_failure(path, exc, "open the store") from None

    @classmethod
    def reader(cls, path: Path) -> Store:
        return cls(path, read_only=True)

    @guarded_method
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:  # SQLite has rolled back itself after some errors (a full disk)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing ------------------------------------------------------------

    @guarded_method
    def save_cycle(self, cycle: Cycle) -> int:
        with self.transaction() as db:
            run_id = _insert_run(db, cycle.run)
            (before,) = db.execute("SELECT ifnull(max(rowid), 0) FROM results").fetchone()
            db.executemany(INSERT_RESULT, [_result_row(r, run_id) for r in cycle.results])
            db.execute(f"UPDATE results SET row = {ROW_SQL} WHERE rowid > ?", (before,))
            write_hours(db, {(r.result.service, floor_to(to_epoch(r.result.ts), HOUR)) for r in cycle.results})
            for res in RESOLUTIONS:
                _upsert_buckets(db, self.path, res, aggregate(cycle.results, res))
            _moved(db, {r.result.service for r in cycle.results})
            db.executemany(
                "INSERT OR REPLACE INTO service_state VALUES (?,?)",
                [(k, orjson.dumps(v.to_json()).decode()) for k, v in cycle.states.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO incidents VALUES (?,?,?,?,?,?)", [_incident_row(i) for i in cycle.incidents]
            )
            db.executemany(
                "INSERT OR REPLACE INTO vendor_sources VALUES (?,?,?,?,?,?,?,?,?,?)",
                [_vendor_row(v) for v in cycle.vendors],
            )
            add_months(db, cycle.months)
            db.executemany(  # an event already queued (a re-run deciding it again) stays as it is
                "INSERT OR IGNORE INTO notifications (event, notifier, queued_at, body) VALUES (?,?,?,?)",
                [(n.event, n.notifier, to_epoch(n.queued_at), n.body) for n in cycle.notifications],
            )
            queue_mail(db, cycle.mail, cycle.run.finished_at or cycle.run.started_at)
        return run_id

    # -- the outbox of notifications ---------------------------------------------------------

    @guarded_method
    def interrupted_notifications(self) -> int:
        """Mark what a run left "sending" as uncertain: it may have reached its notifier, so it is
        never sent again (a duplicate is worse than a loss the log tells of). Returns how many."""
        with self.transaction() as db:
            return db.execute("UPDATE notifications SET state = 'uncertain' WHERE state = 'sending'").rowcount

    @guarded_method
    def waiting_notifications(self) -> list[Notification]:
        """The events not yet sent, oldest first."""
        rows = self.db.execute(
            "SELECT event, notifier, queued_at, body, attempts FROM notifications WHERE state = 'pending' "
            "ORDER BY notifier, queued_at, event"
        )
        return [Notification(e, n, from_epoch(q), b, a) for e, n, q, b, a in rows]

    @guarded_method
    def notifications_sending(self, keys: Iterable[NotificationKey]) -> None:
        """Record that these are about to be sent, before sending them."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE notifications SET state = 'sending', attempts = attempts + 1 "
                "WHERE event = ? AND notifier = ? AND state = 'pending'",
                list(keys),
            )

    @guarded_method
    def notifications_done(self, outcomes: Iterable[SendOutcome], now: datetime) -> None:
        """Record each outcome: its new state (``sent``; ``pending``: sent again next run;
        ``uncertain``; ``expired``), the notifier's answer, and whether the attempt failed."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE notifications SET state = ?, answer = ?, done_at = ?, failures = failures + ? "
                "WHERE event = ? AND notifier = ?",
                [(o.state, o.answer, to_epoch(now), int(o.failed), *o.key) for o in outcomes],
            )

    @guarded_method
    def notification_counts(self) -> dict[str, int]:
        """Events sent, attempts refused, events waiting and events left uncertain, over the outbox."""
        sent, failed, pending, uncertain = self.db.execute(
            "SELECT count(*) FILTER (WHERE state = 'sent'), ifnull(sum(failures), 0), "
            "count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'uncertain') "
            "FROM notifications"
        ).fetchone()
        return {"sent": sent, "failed": failed, "pending": pending, "uncertain": uncertain}

    @guarded_method
    def record_run(self, run: RunRecord) -> None:
        with self.transaction() as db:
            _insert_run(db, run)

    @guarded_method
    def bulk_load(
        self,
        buckets: Iterable[tuple[Any, ...]],
        results: Iterable[tuple[Any, ...]],
        states: dict[str, ServiceState],
        incidents: Sequence[Incident],
        months: Credits | None = None,
    ) -> None:
        """Load prepared rows (as ``statusgen simulate`` makes them) in one transaction."""
        touched: set[str] = set()
        with self.transaction() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO buckets ({BUCKET_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (with_percentiles(b, touched) for b in buckets),
            )
            _moved(db, touched)
            (before,) = db.execute("SELECT ifnull(max(rowid), 0) FROM results").fetchone()
            db.executemany(INSERT_RESULT, results)
            db.execute(f"UPDATE results SET row = {ROW_SQL} WHERE rowid > ?", (before,))
            write_all_hours(db, before)
            db.executemany(
                "INSERT OR REPLACE INTO service_state VALUES (?,?)",
                [(k, orjson.dumps(v.to_json()).decode()) for k, v in states.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO incidents VALUES (?,?,?,?,?,?)", [_incident_row(i) for i in incidents]
            )
            add_months(db, months or {})

    @guarded_method
    def prune(self, now: datetime, report_months: int = 13) -> None:
        """Drop results (by whole hours), buckets and months past their retention."""
        t = to_epoch(now)
        with self.transaction() as db:
            prune_months(db, months_before(month_of(t), report_months - 1))
            prune_locations(db, t - RAW_RETENTION_S)
            cut = floor_to(t - RAW_RETENTION_S, HOUR)
            gone = {s for (s,) in db.execute("DELETE FROM results WHERE ts < ? RETURNING service", (cut,))}
            db.execute("DELETE FROM result_hours WHERE hour < ?", (cut,))
            for res, keep in RESOLUTIONS.items():
                gone.update(
                    s
                    for (s,) in db.execute(
                        "DELETE FROM buckets WHERE res = ? AND start < ? RETURNING service", (res, t - keep)
                    )
                )
            _moved(db, gone)
            db.execute(
                "DELETE FROM notifications WHERE state != 'pending' AND queued_at < ?", (t - NOTIFICATION_RETENTION_S,)
            )
            prune_mail(db, t)

    # -- reading ------------------------------------------------------------

    @guarded_method
    def states(self) -> dict[str, ServiceState]:
        out = {}
        for service, state in self.db.execute("SELECT service, state FROM service_state"):
            try:
                out[service] = ServiceState.from_json(orjson.loads(state))
            except DECODING:
                raise damaged(self.path, "state", service) from None
        return out

    @guarded_method
    def incident_records(self) -> list[tuple[str, int, int | None, str]]:
        """Every incident as (service, start, end or None while open, JSON record), newest first,
        without making any (``sitedata.Incidents``)."""
        return self.db.execute(
            "SELECT service, started_at, ended_at, record FROM incidents ORDER BY started_at DESC, id DESC"
        ).fetchall()

    @guarded_method
    def incidents(self) -> list[Incident]:
        return [self._incident(service, at, record) for service, at, _, record in self.incident_records()]

    def _incident(self, service: str, started: int, record: str) -> Incident:
        try:
            return Incident.from_json(orjson.loads(record))
        except DECODING:
            raise damaged(self.path, "incident", service, started) from None

    @guarded_method
    def incident_ids(self) -> set[str]:
        return {i for (i,) in self.db.execute("SELECT id FROM incidents")}

    @guarded_method
    def open_incidents(self) -> dict[str, Incident]:
        rows = self.db.execute("SELECT service, started_at, record FROM incidents WHERE ended_at IS NULL")
        found = (self._incident(service, at, record) for service, at, record in rows)
        return {i.service: i for i in found}

    @guarded_method
    def last_finished_run(self) -> RunRecord | None:
        row = self.db.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return _run_from_row(row) if row else None

    @guarded_method
    def first_run_started(self) -> datetime | None:
        row = self.db.execute("SELECT MIN(started_at) FROM runs").fetchone()
        return from_epoch(row[0]) if row and row[0] is not None else None

    @guarded_method
    def recent_results(self, since: datetime) -> dict[str, list[StoredResult]]:
        rows = self.db.execute(
            "SELECT service, check_index, ts, outcome, latency_ms, http_status, slow, flag FROM results "
            "WHERE ts >= ? ORDER BY ts",
            (to_epoch(since),),
        )
        out: dict[str, list[StoredResult]] = defaultdict(list)
        for svc, idx, ts, outcome, lat, status, slow, flag in rows:
            out[svc].append(
                StoredResult(CheckResult(svc, idx, from_epoch(ts), Outcome(outcome), lat, status, bool(slow)), flag)
            )
        return out

    @guarded_method
    def buckets(self, service: str, res: int, since: int, until: int) -> list[Bucket]:
        """One service's buckets of one resolution in [since, until), oldest first."""
        rows = self.db.execute(
            "SELECT start, up, down, slow, maintenance, excluded, p50, p95, hist FROM buckets "
            "WHERE service = ? AND res = ? AND start >= ? AND start < ? ORDER BY start",
            (service, res, since, until),
        )
        return list(map(Bucket._make, rows))

    @guarded_method
    def bucket_sums(self, service: str, res: int, since: int, until: int) -> Sums:
        """What one service's buckets of one resolution in [since, until) add up to."""
        row = self.db.execute(
            "SELECT ifnull(sum(up), 0), ifnull(sum(down), 0), ifnull(sum(maintenance), 0), ifnull(sum(excluded), 0) "
            "FROM buckets WHERE service = ? AND res = ? AND start >= ? AND start < ?",
            (service, res, since, until),
        ).fetchone()
        return Sums(*map(int, row))

    @guarded_method
    def bucket_tallies(self, service: str, spans: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
        """For each (resolution, since, until) of ``spans``: how many of the service's buckets of that
        resolution lie in [since, until), and how many results they hold (every result stored adds
        one to the bucket it falls in). One query for them all."""
        one = (
            "SELECT ?, count(*), ifnull(sum(up + down + maintenance + excluded), 0) FROM buckets "
            "WHERE service = ? AND res = ? AND start >= ? AND start < ?"
        )
        rows = self.db.execute(
            " UNION ALL ".join([one] * len(spans)),
            [v for i, (res, since, until) in enumerate(spans) for v in (i, service, res, since, until)],
        )
        tallies = {i: (int(count), int(results)) for i, count, results in rows}
        return [tallies[i] for i in range(len(spans))]

    @guarded_method
    def buckets_at(self, service: str, starts: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Bucket]:
        """The service's buckets at these (resolution, start), where there are any."""
        if not starts:
            return {}
        rows = self.db.execute(
            "SELECT res, start, up, down, slow, maintenance, excluded, p50, p95, hist FROM buckets "
            f"WHERE service = ? AND (res, start) IN (VALUES {', '.join(['(?, ?)'] * len(starts))})",
            [service, *(v for pair in starts for v in pair)],
        )
        return {(row[0], row[1]): Bucket._make(row[1:]) for row in rows}

    @guarded_method
    def last_day_json(self, service: str, since: datetime) -> tuple[int, str]:
        """A service's raw results from ``since`` on, oldest first: their count, and the JSON
        array the service record publishes (rows made when the results were written).

        The whole hours come from their blocks (``result_hours``: a day's worth is some 12 KB,
        against 250 KB of rows in the index), the part of an hour before them from the rows."""
        t, whole = _last_day_split(since)
        count, head = self.db.execute(SPAN_ROWS, (service, t, whole)).fetchone()
        parts = [head] if count else []
        for hour, n, rows in self.db.execute(
            "SELECT hour, n, rows FROM result_hours WHERE service = ? AND hour >= ? ORDER BY hour", (service, whole)
        ):
            count += n
            try:
                parts.append(inflated(rows))
            except DECODING:
                raise damaged(self.path, "results of the hour", service, hour) from None
        return count, "[" + ",".join(parts) + "]"

    @guarded_method
    def last_day_count(self, service: str, since: datetime) -> int:
        """How many results of a service are from ``since`` on, as ``last_day_json`` counts them,
        without reading them. With the service's measurements version, it tells whether its last
        day of results is the one a previous build read: results leave the last day only from its
        old end."""
        t, whole = _last_day_split(since)
        head = self.db.execute(
            "SELECT count(*) FROM results WHERE service = ? AND ts >= ? AND ts < ?", (service, t, whole)
        ).fetchone()[0]
        hours = self.db.execute(
            "SELECT ifnull(sum(n), 0) FROM result_hours WHERE service = ? AND hour >= ?", (service, whole)
        ).fetchone()[0]
        return int(head + hours)

    @guarded_method
    def data_versions(self) -> dict[str, int]:
        """Each service's measurements version: it moves whenever its results or buckets are
        written or pruned (a service missing here has version 0). A build skips the files of a
        service whose version and other inputs are those of the previous build."""
        return dict(self.db.execute("SELECT service, version FROM service_data"))

    @guarded_method
    def months(self, first: str) -> dict[str, dict[str, Tally]]:
        """Every service's monthly rollups from month ``first`` (``YYYY-MM``) on."""
        return read_months(self.db, first)

    @guarded_method
    def vendor_rows(self) -> dict[str, VendorRow]:
        rows = self.db.execute(
            "SELECT service, url, etag, last_modified, body, last_ok_at, fetched_at, outcome, "
            "detail, view FROM vendor_sources"
        )
        return {r[0]: VendorRow(r[0], r[1], r[2], r[3], r[4], _time(r[5]), _time(r[6]), r[7], r[8], r[9]) for r in rows}

    @guarded_method
    def schema_version(self) -> int:
        return current_version(self.db)


def _insert_run(db: sqlite3.Connection, run: RunRecord) -> int:
    cur = db.execute(
        "INSERT INTO runs (started_at, finished_at, checks_attempted, checks_failed, vendors_attempted, "
        "vendors_failed, probe_ms, note, canaries_attempted, canaries_failed, results_excluded) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            run.started_at.timestamp(),
            run.finished_at.timestamp() if run.finished_at else None,
            run.checks_attempted,
            run.checks_failed,
            run.vendors_attempted,
            run.vendors_failed,
            run.probe_ms,
            kept_words(run.note),
            run.canaries_attempted,
            run.canaries_failed,
            run.results_excluded,
        ),
    )
    return int(cur.lastrowid or 0)


def _run_from_row(row: tuple[Any, ...]) -> RunRecord:
    rid, started, finished, ca, cf, va, vf, probe_ms, note, kn, kf, ex = row
    finished_at, note = from_epoch(finished) if finished else None, words_of(note)
    return RunRecord(rid, from_epoch(started), finished_at, ca, cf, va, vf, probe_ms, note, kn, kf, ex)


def _result_row(r: StoredResult, run_id: int) -> tuple[Any, ...]:
    c = r.result
    return (
        c.service,
        c.check_index,
        to_epoch(c.ts),
        c.outcome.value,
        c.latency_ms,
        c.http_status,
        int(c.slow),
        r.flag,
        run_id,
    )


def _time(value: float | None) -> datetime | None:
    return from_epoch(value) if value is not None else None


def _vendor_row(v: VendorRow) -> tuple[Any, ...]:
    return (
        v.service,
        v.url,
        v.etag,
        v.last_modified,
        v.body,
        v.last_ok_at.timestamp() if v.last_ok_at else None,
        v.fetched_at.timestamp() if v.fetched_at else None,
        v.outcome,
        v.detail,
        v.view_json,
    )


def _incident_row(i: Incident) -> tuple[Any, ...]:
    return (
        i.id,
        i.service,
        to_epoch(i.started_at),
        to_epoch(i.ended_at) if i.ended_at else None,
        to_epoch(i.updated_at),
        orjson.dumps(i.to_json()).decode(),
    )


def _moved(db: sqlite3.Connection, services: Iterable[str]) -> None:
    """Move the measurements version of ``services`` (their results or buckets were written)."""
    db.executemany(
        "INSERT INTO service_data VALUES (?, 1) ON CONFLICT (service) DO UPDATE SET version = version + 1",
        [(s,) for s in sorted(services)],
    )


def _upsert_buckets(db: sqlite3.Connection, path: Path, res: int, rows: dict[tuple[str, int], BucketRow]) -> None:
    """Add ``rows`` into the stored buckets."""
    for (svc, start), row in rows.items():
        old = db.execute(
            "SELECT up, down, slow, maintenance, excluded, hist FROM buckets "
            "WHERE service = ? AND res = ? AND start = ?",
            (svc, res, start),
        ).fetchone()
        if old:
            up, down, slow, maintenance, excluded, hist = old
            try:
                row.add(BucketRow(start, up, down, slow, maintenance, excluded, latency.decode(hist)))
            except DECODING:
                raise damaged(path, "bucket", svc, start) from None
        db.execute(
            f"INSERT OR REPLACE INTO buckets ({BUCKET_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                res,
                start,
                svc,
                row.up,
                row.down,
                row.slow,
                row.maintenance,
                row.excluded,
                latency.encode(row.hist),
                latency.percentile(row.hist, 0.5),
                latency.percentile(row.hist, 0.95),
            ),
        )


def recorded_incident_ids(path: Path) -> set[str]:
    """The ids of the incidents a store holds, read without writing it (none when there is no
    store yet): for ``statusgen check-config``, which may run beside a run."""
    if not path.exists():
        return set()
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            return {i for (i,) in db.execute("SELECT id FROM incidents")}
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise store_failure(path, exc, "read the store's incidents") from None
