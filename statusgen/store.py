"""The embedded store: one SQLite file, in WAL mode.

The schema is built by numbered migrations (``MIGRATIONS``), each applied in
its own transaction and recorded in ``schema_migrations``, so an old store
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
"""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson
from isal import isal_zlib

from statusgen import latency
from statusgen.decide.health import RunRecord
from statusgen.decide.history import Bucket, Sums
from statusgen.decide.incidents import Incident
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.errors import StoreError
from statusgen.lock import lock_path, run_lock
from statusgen.model import CheckResult, Outcome
from statusgen.timeutil import floor_to, from_epoch, to_epoch
from statusgen.vendors.stage import VendorRow

# resolution (seconds) -> how long its buckets are kept (seconds)
RESOLUTIONS: dict[int, int] = {300: 86400 + 3600, 3600: 8 * 86400, 21600: 31 * 86400, 86400: 91 * 86400}
RAW_RETENTION_S = 2 * 86400
# A result as the service record publishes it, made by SQLite when the result is written:
# [at, check, outcome, latency_ms, http_status, slow, flag]
ROW_SQL = (
    "json_array(strftime('%Y-%m-%dT%H:%M:%SZ', ts, 'unixepoch'), check_index + 1, outcome, latency_ms, "
    "http_status, json(CASE slow WHEN 0 THEN 'false' ELSE 'true' END), flag)"
)
INSERT_RESULT = (
    "INSERT INTO results (service, check_index, ts, outcome, latency_ms, http_status, slow, flag, run_id) "
    "VALUES (?,?,?,?,?,?,?,?,?)"
)
RUN_COLUMNS = (
    "id, started_at, finished_at, checks_attempted, checks_failed, vendors_attempted, vendors_failed, "
    "probe_ms, note, canaries_attempted, canaries_failed, results_excluded"
)

HOUR = 3600
#: The columns of a bucket as the store writes them (``simulate``'s prepared rows hold them in this order).
BUCKET_COLUMNS = "res, start, service, up, down, slow, maintenance, excluded, hist, p50, p95"
# A service's rows of one span of time, in order, as the record publishes them: their count and text.
SPAN_ROWS = (
    "SELECT count(*), ifnull(group_concat(row, ','), '') FROM "
    "(SELECT row FROM results WHERE service = ? AND ts >= ? AND ts < ? ORDER BY ts, check_index)"
)


def _last_day_split(since: datetime) -> tuple[int, int]:
    """Where a last day from ``since`` reads its rows (``since`` to the first whole hour, from the
    results) and where its hourly blocks begin: both as epoch seconds."""
    t = to_epoch(since)
    return t, -(-t // HOUR) * HOUR


def _write_hours(db: sqlite3.Connection, hours: Iterable[tuple[str, int]]) -> None:
    """Rewrite the blocks of these (service, hour) from the results (an hour left empty goes)."""
    blocks = [(svc, hour, *db.execute(SPAN_ROWS, (svc, hour, hour + HOUR)).fetchone()) for svc, hour in sorted(hours)]
    db.executemany(
        "INSERT OR REPLACE INTO result_hours VALUES (?,?,?,?)",
        [(svc, hour, n, _deflated(text)) for svc, hour, n, text in blocks if n],
    )
    db.executemany(
        "DELETE FROM result_hours WHERE service = ? AND hour = ?", [(svc, hour) for svc, hour, n, _ in blocks if not n]
    )


def _write_all_hours(db: sqlite3.Connection, after: int = 0) -> None:
    """The blocks of every hour holding a result written after rowid ``after`` (a migrated
    store: all of them; a simulated service as it is loaded)."""
    _write_hours(
        db,
        db.execute(f"SELECT DISTINCT service, ts / {HOUR} * {HOUR} FROM results WHERE rowid > ?", (after,)).fetchall(),
    )


Step = str | Callable[[sqlite3.Connection], None]  # SQL, or a function of the open transaction

MIGRATIONS: list[tuple[int, str, list[Step]]] = [
    (
        1,
        "initial schema",
        [
            """CREATE TABLE runs (
            id INTEGER PRIMARY KEY, started_at REAL NOT NULL, finished_at REAL,
            checks_attempted INTEGER NOT NULL DEFAULT 0, checks_failed INTEGER NOT NULL DEFAULT 0,
            vendors_attempted INTEGER NOT NULL DEFAULT 0, vendors_failed INTEGER NOT NULL DEFAULT 0,
            probe_ms REAL NOT NULL DEFAULT 0, note TEXT)""",
            """CREATE TABLE results (
            service TEXT NOT NULL, check_index INTEGER NOT NULL, ts INTEGER NOT NULL,
            outcome TEXT NOT NULL, latency_ms REAL, http_status INTEGER, slow INTEGER NOT NULL,
            flag TEXT, run_id INTEGER)""",
            "CREATE INDEX results_by_time ON results (ts)",
            """CREATE TABLE buckets (
            res INTEGER NOT NULL, start INTEGER NOT NULL, service TEXT NOT NULL,
            up INTEGER NOT NULL DEFAULT 0, down INTEGER NOT NULL DEFAULT 0, slow INTEGER NOT NULL DEFAULT 0,
            maintenance INTEGER NOT NULL DEFAULT 0, excluded INTEGER NOT NULL DEFAULT 0, hist BLOB,
            PRIMARY KEY (res, start, service)) WITHOUT ROWID""",
            "CREATE TABLE service_state (service TEXT PRIMARY KEY, state TEXT NOT NULL)",
            """CREATE TABLE incidents (
            id TEXT PRIMARY KEY, service TEXT NOT NULL, started_at INTEGER NOT NULL,
            ended_at INTEGER, updated_at INTEGER NOT NULL, record TEXT NOT NULL)""",
            "CREATE INDEX incidents_open ON incidents (service) WHERE ended_at IS NULL",
        ],
    ),
    (
        2,
        "vendor sources",
        [
            """CREATE TABLE vendor_sources (
            service TEXT PRIMARY KEY, url TEXT NOT NULL, etag TEXT, last_modified TEXT, body BLOB,
            last_ok_at REAL, fetched_at REAL, outcome TEXT, detail TEXT, view TEXT)""",
        ],
    ),
    (
        3,
        "vantage point figures of a run",
        [
            "ALTER TABLE runs ADD COLUMN canaries_attempted INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE runs ADD COLUMN canaries_failed INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE runs ADD COLUMN results_excluded INTEGER NOT NULL DEFAULT 0",
        ],
    ),
    (
        4,
        "latency percentiles kept per bucket",
        [
            "ALTER TABLE buckets ADD COLUMN p50 REAL",
            "ALTER TABLE buckets ADD COLUMN p95 REAL",
            "UPDATE buckets SET p50 = NULL, p95 = NULL",
        ],
    ),
    (
        5,
        "each result's published row, and results by service",
        [
            "ALTER TABLE results ADD COLUMN row TEXT",
            f"UPDATE results SET row = {ROW_SQL}",
            "CREATE INDEX results_by_service ON results (service, ts)",
        ],
    ),
    (
        6,
        "closed history points kept between builds, and buckets by service",
        [
            """CREATE TABLE history_cache (
            service TEXT NOT NULL, res INTEGER NOT NULL, first INTEGER NOT NULL, upto INTEGER NOT NULL,
            key TEXT NOT NULL, points TEXT NOT NULL, counts TEXT NOT NULL, hist BLOB,
            PRIMARY KEY (service, res))""",
            "CREATE INDEX buckets_by_service ON buckets (res, service, start)",
        ],
    ),
    (
        7,
        "a service's last day read from the index alone",
        [
            "CREATE INDEX results_last_day ON results (service, ts, check_index, row)",
            "DROP INDEX results_by_service",
        ],
    ),
    (
        8,
        "a version of each service's measurements, moved by every write of its results or buckets",
        [
            "CREATE TABLE service_data (service TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID",
        ],
    ),
    (
        9,
        "a service's results kept in hourly blocks, so that its last day is read in a few pages",
        [
            """CREATE TABLE result_hours (
            service TEXT NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, rows BLOB NOT NULL,
            PRIMARY KEY (service, hour)) WITHOUT ROWID""",
            _write_all_hours,
        ],
    ),
    (
        10,
        "the chart columns of the closed history points kept between builds",
        [
            "ALTER TABLE history_cache ADD COLUMN series BLOB",  # none yet: the next build makes them
        ],
    ),
    (
        11,
        "what the charts drew of the closed history points, kept with them",
        [
            "ALTER TABLE history_cache ADD COLUMN drawn BLOB",  # none yet: the next build draws them
        ],
    ),
    (
        12,
        "buckets kept by service; the history points kept by builds leave the store",
        [
            "DROP TABLE history_cache",
            """CREATE TABLE buckets_new (
            service TEXT NOT NULL, res INTEGER NOT NULL, start INTEGER NOT NULL,
            up INTEGER NOT NULL DEFAULT 0, down INTEGER NOT NULL DEFAULT 0, slow INTEGER NOT NULL DEFAULT 0,
            maintenance INTEGER NOT NULL DEFAULT 0, excluded INTEGER NOT NULL DEFAULT 0, hist BLOB,
            p50 REAL, p95 REAL, PRIMARY KEY (service, res, start)) WITHOUT ROWID""",
            "INSERT INTO buckets_new SELECT service, res, start, up, down, slow, maintenance, excluded, hist, "
            "p50, p95 FROM buckets ORDER BY service, res, start",
            "DROP TABLE buckets",
            "ALTER TABLE buckets_new RENAME TO buckets",
        ],
    ),
    (
        13,
        "notifications: each event due to each notifier, and whether it was sent",
        [
            # state: pending, then sending (set before the send), then sent; back to pending when the
            # notifier refused it; uncertain when a run stopped while sending it (never sent again);
            # expired when it waited past its bound.
            """CREATE TABLE notifications (
            event TEXT NOT NULL, notifier TEXT NOT NULL, queued_at INTEGER NOT NULL, body TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0, done_at INTEGER, answer TEXT,
            PRIMARY KEY (event, notifier)) WITHOUT ROWID""",
            "CREATE INDEX notifications_waiting ON notifications (state, notifier, queued_at)",
        ],
    ),
]
NOTIFICATION_RETENTION_S = 30 * 86400  # sent or abandoned events are kept this long (health counts them)
NotificationKey = tuple[str, str]  # (event id, notifier)


@dataclass
class BucketRow:
    start: int
    up: int = 0
    down: int = 0
    slow: int = 0
    maintenance: int = 0
    excluded: int = 0
    hist: latency.Histogram = field(default_factory=dict)
    p50: float | None = None  # kept with the bucket, so reading it needs no histogram
    p95: float | None = None

    def add(self, other: BucketRow) -> None:
        self.up += other.up
        self.down += other.down
        self.slow += other.slow
        self.maintenance += other.maintenance
        self.excluded += other.excluded
        latency.merge(self.hist, other.hist)


# A service's hour of published rows, deflated: a day of them is some 12 KB against 250 KB of rows.
def _deflated(rows: str) -> bytes:
    return isal_zlib.compress(rows.encode(), 1)


def _inflated(rows: bytes) -> str:
    return isal_zlib.decompress(rows).decode()


@dataclass(frozen=True)
class Notification:
    """An event due to a notifier, as the outbox keeps it: ``body`` is the event's JSON."""

    event: str
    notifier: str
    queued_at: datetime
    body: str
    attempts: int = 0

    @property
    def key(self) -> NotificationKey:
        return (self.event, self.notifier)


@dataclass(frozen=True)
class SendOutcome:
    """How an attempt to send an event went, as the outbox records it."""

    key: NotificationKey
    state: str  # sent | pending | uncertain | expired
    answer: str  # what the notifier answered, without its URL
    failed: bool


@dataclass(frozen=True)
class Cycle:
    """Everything one run writes, in one transaction."""

    run: RunRecord
    results: Sequence[StoredResult]
    states: dict[str, ServiceState]
    incidents: Sequence[Incident]
    vendors: Sequence[VendorRow] = ()
    notifications: Sequence[Notification] = ()  # queued with the decisions they tell of


def bucket_of(r: StoredResult, res: int) -> BucketRow:
    row = BucketRow(floor_to(to_epoch(r.result.ts), res))
    if r.flag == "maintenance":
        row.maintenance = 1
    elif r.flag == "excluded":
        row.excluded = 1
    elif r.result.up:
        row.up, row.slow = 1, int(r.result.slow)
    else:
        row.down = 1
    if r.flag is None and r.result.latency_ms is not None and r.result.up:
        latency.add(row.hist, [r.result.latency_ms])
    return row


def aggregate(results: Iterable[StoredResult], res: int) -> dict[tuple[str, int], BucketRow]:
    out: dict[tuple[str, int], BucketRow] = {}
    for r in results:
        row = bucket_of(r, res)
        key = (r.result.service, row.start)
        if key in out:
            out[key].add(row)
        else:
            out[key] = row
    return out


# -- the store's boundary: SQLite's and the file system's errors as StoreError ------------------

#: What to do about a damaged store (also said when a store is missing where one was recorded).
RESTORE = "restore it from a backup, or move it aside and run with --new-store to start a new one"


def store_failure(path: Path, exc: sqlite3.Error | OSError, doing: str = "read or write the store") -> StoreError:
    """An error of SQLite or of the file system while ``doing``, as one line naming the store's
    file and what to do."""
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return StoreError(f"{path}: cannot {doing} ({' '.join(detail.split())}): {_advice(path, exc)}")


def _advice(path: Path, exc: sqlite3.Error | OSError) -> str:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary code, without the extended bits
    err = exc.errno if isinstance(exc, OSError) else None
    if code == sqlite3.SQLITE_FULL or err in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"the disk is full; free space on {path.parent} and run again"
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM) or err in _READ_ONLY:
        return f"make {path.parent} and the store's files writable by this user, and run again"
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return f"the store is damaged; {RESTORE}"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "another process holds the database locked; let it finish (or stop it) and run again"
    if code == sqlite3.SQLITE_IOERR and _full(path.parent):  # SQLite says so of some writes to a full disk
        return f"the disk is full; free space on {path.parent} and run again"
    if code == sqlite3.SQLITE_IOERR:
        return f"the disk could not be read or written; check that {path.parent} has space and its disk works"
    return "check the store's file and folder, and run again"


_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def _full(folder: Path) -> bool:
    """Whether the disk of ``folder`` is all but full: too little left for a page or two of the store."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 2 * 4096


Method = TypeVar("Method", bound=Callable[..., Any])


def _guarded(method: Method) -> Method:
    """The method, with any error of SQLite raised as the store's (a disk that fills during a run,
    a page found damaged while reading)."""

    @functools.wraps(method)
    def guarded(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_failure(self.path, exc) from None

    return cast(Method, guarded)


def _must_hold_data(path: Path) -> None:
    """A store recorded by a previous run must still be there, with its data: SQLite would take a
    missing or empty file for a new store, and the site would lose its history without a word."""
    wal = path.with_name(path.name + "-wal")
    if not path.exists():
        state = "missing"
    elif path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        state = "empty"
    else:
        return
    raise StoreError(f"{path}: the store is {state}, but a previous run recorded one here: {RESTORE}")


#: Stores found sound by this process (and by the process it was forked from): checking reads the
#: whole file, so a process checks each store once.
_checked: set[Path] = set()


def _check_once(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a damaged store before anything reads or writes it: SQLite reads a page only when a
    query needs it, so damage elsewhere would go unseen while builds publish from the rest."""
    key = path.resolve()
    if key in _checked:
        return
    problems = [row[0] for row in db.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        first = " ".join(str(problems[0]).split())
        raise StoreError(f"{path}: the store is damaged (quick_check: {first}): {RESTORE}")
    _checked.add(key)


@contextmanager
def lock_store(path: Path, wait_s: float = 0.0) -> Iterator[None]:
    """The run lock beside the store (``lock.run_lock``), a folder that cannot hold it being the
    store's error: it is the store's folder that must be writable."""
    with ExitStack() as stack:
        try:
            stack.enter_context(run_lock(path, wait_s))
        except OSError as exc:
            raise store_failure(lock_path(path), exc, "take the run lock beside the store") from None
        yield


class Store:
    """The store at ``path``. ``expected``: a previous run recorded a store there, so a missing or
    empty file means its history was lost, not that the site is new (``StoreError``)."""

    def __init__(self, path: Path, expected: bool = False):
        self.path = path
        if expected:
            _must_hold_data(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        except (sqlite3.Error, OSError) as exc:
            raise store_failure(path, exc, "open the store") from None
        try:
            _check_once(self.db, path)
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

    @_guarded
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

    @_guarded
    def save_cycle(self, cycle: Cycle) -> int:
        with self.transaction() as db:
            run_id = _insert_run(db, cycle.run)
            (before,) = db.execute("SELECT ifnull(max(rowid), 0) FROM results").fetchone()
            db.executemany(INSERT_RESULT, [_result_row(r, run_id) for r in cycle.results])
            db.execute(f"UPDATE results SET row = {ROW_SQL} WHERE rowid > ?", (before,))
            _write_hours(db, {(r.result.service, floor_to(to_epoch(r.result.ts), HOUR)) for r in cycle.results})
            for res in RESOLUTIONS:
                _upsert_buckets(db, res, aggregate(cycle.results, res))
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
            db.executemany(  # an event already queued (a re-run deciding it again) stays as it is
                "INSERT OR IGNORE INTO notifications (event, notifier, queued_at, body) VALUES (?,?,?,?)",
                [(n.event, n.notifier, to_epoch(n.queued_at), n.body) for n in cycle.notifications],
            )
        return run_id

    # -- the outbox of notifications ---------------------------------------------------------

    @_guarded
    def interrupted_notifications(self) -> int:
        """Mark what a run left "sending" as uncertain: it may have reached its notifier, so it is
        never sent again (a duplicate is worse than a loss the log tells of). Returns how many."""
        with self.transaction() as db:
            return db.execute("UPDATE notifications SET state = 'uncertain' WHERE state = 'sending'").rowcount

    @_guarded
    def waiting_notifications(self) -> list[Notification]:
        """The events not yet sent, oldest first."""
        rows = self.db.execute(
            "SELECT event, notifier, queued_at, body, attempts FROM notifications WHERE state = 'pending' "
            "ORDER BY notifier, queued_at, event"
        )
        return [Notification(e, n, from_epoch(q), b, a) for e, n, q, b, a in rows]

    @_guarded
    def notifications_sending(self, keys: Iterable[NotificationKey]) -> None:
        """Record that these are about to be sent, before sending them."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE notifications SET state = 'sending', attempts = attempts + 1 "
                "WHERE event = ? AND notifier = ? AND state = 'pending'",
                list(keys),
            )

    @_guarded
    def notifications_done(self, outcomes: Iterable[SendOutcome], now: datetime) -> None:
        """Record each outcome: its new state (``sent``; ``pending``: sent again next run;
        ``uncertain``; ``expired``), the notifier's answer, and whether the attempt failed."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE notifications SET state = ?, answer = ?, done_at = ?, failures = failures + ? "
                "WHERE event = ? AND notifier = ?",
                [(o.state, o.answer, to_epoch(now), int(o.failed), *o.key) for o in outcomes],
            )

    @_guarded
    def notification_counts(self) -> dict[str, int]:
        """Events sent, attempts refused, events waiting and events left uncertain, over the outbox."""
        sent, failed, pending, uncertain = self.db.execute(
            "SELECT count(*) FILTER (WHERE state = 'sent'), ifnull(sum(failures), 0), "
            "count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'uncertain') "
            "FROM notifications"
        ).fetchone()
        return {"sent": sent, "failed": failed, "pending": pending, "uncertain": uncertain}

    @_guarded
    def record_run(self, run: RunRecord) -> None:
        with self.transaction() as db:
            _insert_run(db, run)

    @_guarded
    def bulk_load(
        self,
        buckets: Iterable[tuple[Any, ...]],
        results: Iterable[tuple[Any, ...]],
        states: dict[str, ServiceState],
        incidents: Sequence[Incident],
    ) -> None:
        """Load prepared rows (as ``statusgen simulate`` makes them) in one transaction."""
        touched: set[str] = set()
        with self.transaction() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO buckets ({BUCKET_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (_with_percentiles(b, touched) for b in buckets),
            )
            _moved(db, touched)
            (before,) = db.execute("SELECT ifnull(max(rowid), 0) FROM results").fetchone()
            db.executemany(INSERT_RESULT, results)
            db.execute(f"UPDATE results SET row = {ROW_SQL} WHERE rowid > ?", (before,))
            _write_all_hours(db, before)
            db.executemany(
                "INSERT OR REPLACE INTO service_state VALUES (?,?)",
                [(k, orjson.dumps(v.to_json()).decode()) for k, v in states.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO incidents VALUES (?,?,?,?,?,?)", [_incident_row(i) for i in incidents]
            )

    @_guarded
    def prune(self, now: datetime) -> None:
        """Drop raw results and buckets past their retention (results by whole hours, with their blocks)."""
        t = to_epoch(now)
        with self.transaction() as db:
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

    # -- reading ------------------------------------------------------------

    @_guarded
    def states(self) -> dict[str, ServiceState]:
        rows = self.db.execute("SELECT service, state FROM service_state")
        return {s: ServiceState.from_json(orjson.loads(j)) for s, j in rows}

    @_guarded
    def incident_records(self) -> list[tuple[str, int, int | None, str]]:
        """Every incident as (service, start, end or None while open, JSON record), newest first,
        without making any (``sitedata.Incidents``)."""
        return self.db.execute(
            "SELECT service, started_at, ended_at, record FROM incidents ORDER BY started_at DESC, id DESC"
        ).fetchall()

    @_guarded
    def incidents(self) -> list[Incident]:
        return [Incident.from_json(orjson.loads(j)) for _, _, _, j in self.incident_records()]

    @_guarded
    def incident_ids(self) -> set[str]:
        return {i for (i,) in self.db.execute("SELECT id FROM incidents")}

    @_guarded
    def open_incidents(self) -> dict[str, Incident]:
        rows = self.db.execute("SELECT record FROM incidents WHERE ended_at IS NULL")
        found = (Incident.from_json(orjson.loads(j)) for (j,) in rows)
        return {i.service: i for i in found}

    @_guarded
    def last_finished_run(self) -> RunRecord | None:
        row = self.db.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return _run_from_row(row) if row else None

    @_guarded
    def first_run_started(self) -> datetime | None:
        row = self.db.execute("SELECT MIN(started_at) FROM runs").fetchone()
        return from_epoch(row[0]) if row and row[0] is not None else None

    @_guarded
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

    @_guarded
    def buckets(self, service: str, res: int, since: int, until: int) -> list[Bucket]:
        """One service's buckets of one resolution in [since, until), oldest first."""
        rows = self.db.execute(
            "SELECT start, up, down, slow, maintenance, excluded, p50, p95, hist FROM buckets "
            "WHERE service = ? AND res = ? AND start >= ? AND start < ? ORDER BY start",
            (service, res, since, until),
        )
        return list(map(Bucket._make, rows))

    @_guarded
    def bucket_sums(self, service: str, res: int, since: int, until: int) -> Sums:
        """What one service's buckets of one resolution in [since, until) add up to."""
        row = self.db.execute(
            "SELECT ifnull(sum(up), 0), ifnull(sum(down), 0), ifnull(sum(maintenance), 0), ifnull(sum(excluded), 0) "
            "FROM buckets WHERE service = ? AND res = ? AND start >= ? AND start < ?",
            (service, res, since, until),
        ).fetchone()
        return Sums(*map(int, row))

    @_guarded
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

    @_guarded
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

    @_guarded
    def last_day_json(self, service: str, since: datetime) -> tuple[int, str]:
        """A service's raw results from ``since`` on, oldest first: their count, and the JSON
        array the service record publishes (rows made when the results were written).

        The whole hours come from their blocks (``result_hours``: a day's worth is some 12 KB,
        against 250 KB of rows in the index), the part of an hour before them from the rows."""
        t, whole = _last_day_split(since)
        count, head = self.db.execute(SPAN_ROWS, (service, t, whole)).fetchone()
        parts = [head] if count else []
        for n, rows in self.db.execute(
            "SELECT n, rows FROM result_hours WHERE service = ? AND hour >= ? ORDER BY hour", (service, whole)
        ):
            count += n
            parts.append(_inflated(rows))
        return count, "[" + ",".join(parts) + "]"

    @_guarded
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

    @_guarded
    def data_versions(self) -> dict[str, int]:
        """Each service's measurements version: it moves whenever its results or buckets are
        written or pruned (a service missing here has version 0). A build skips the files of a
        service whose version and other inputs are those of the previous build."""
        return dict(self.db.execute("SELECT service, version FROM service_data"))

    @_guarded
    def vendor_rows(self) -> dict[str, VendorRow]:
        rows = self.db.execute(
            "SELECT service, url, etag, last_modified, body, last_ok_at, fetched_at, outcome, "
            "detail, view FROM vendor_sources"
        )
        return {r[0]: VendorRow(r[0], r[1], r[2], r[3], r[4], _time(r[5]), _time(r[6]), r[7], r[8], r[9]) for r in rows}

    @_guarded
    def schema_version(self) -> int:
        return current_version(self.db)


# -- helpers ----------------------------------------------------------------------


def current_version(db: sqlite3.Connection) -> int:
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    (v,) = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(v)


def migrate(db: sqlite3.Connection, upto: int | None = None) -> None:
    """Apply every migration newer than the store, each in its own transaction."""
    have = current_version(db)
    for version, name, statements in MIGRATIONS:
        if version <= have or (upto is not None and version > upto):
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            for step in statements:
                if callable(step):
                    step(db)
                else:
                    db.execute(step)
            db.execute("INSERT INTO schema_migrations VALUES (?, ?, datetime('now'))", (version, name))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


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
            run.note,
            run.canaries_attempted,
            run.canaries_failed,
            run.results_excluded,
        ),
    )
    return int(cur.lastrowid or 0)


def _run_from_row(row: tuple[Any, ...]) -> RunRecord:
    rid, started, finished, ca, cf, va, vf, probe_ms, note, kn, kf, ex = row
    return RunRecord(
        rid, from_epoch(started), from_epoch(finished) if finished else None, ca, cf, va, vf, probe_ms, note, kn, kf, ex
    )


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


def _upsert_buckets(db: sqlite3.Connection, res: int, rows: dict[tuple[str, int], BucketRow]) -> None:
    """Add ``rows`` into the stored buckets."""
    for (svc, start), row in rows.items():
        old = db.execute(
            "SELECT up, down, slow, maintenance, excluded, hist FROM buckets "
            "WHERE service = ? AND res = ? AND start = ?",
            (svc, res, start),
        ).fetchone()
        if old:
            up, down, slow, maintenance, excluded, hist = old
            row.add(BucketRow(start, up, down, slow, maintenance, excluded, latency.decode(hist)))
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


_PERCENTILES: dict[bytes, tuple[float | None, float | None]] = {}


def _with_percentiles(row: tuple[Any, ...], services: set[str]) -> tuple[Any, ...]:
    """A prepared bucket row with its p50 and p95 filled from its histogram (cached per histogram);
    its service is added to ``services``."""
    services.add(row[2])
    blob = row[8] or b""
    if blob not in _PERCENTILES:
        hist = latency.decode(blob)
        _PERCENTILES[blob] = (latency.percentile(hist, 0.5), latency.percentile(hist, 0.95))
    return (*row[:9], *_PERCENTILES[blob])


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
