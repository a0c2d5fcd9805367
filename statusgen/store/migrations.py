"""The store's schema, as numbered migrations: each applied in its own transaction and recorded
in ``schema_migrations``, so an old store upgrades in place. A migration is never edited once
released: a change of schema is a new one at the end."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from statusgen.errors import StoreError
from statusgen.store.hours import ROW_SQL, write_all_hours

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
            write_all_hours,
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
    (
        14,
        "monthly rollups, kept for the reports after the results and buckets are pruned",
        [
            """CREATE TABLE months (
            service TEXT NOT NULL, month TEXT NOT NULL,
            operational INTEGER NOT NULL DEFAULT 0, degraded INTEGER NOT NULL DEFAULT 0,
            partial_outage INTEGER NOT NULL DEFAULT 0, major_outage INTEGER NOT NULL DEFAULT 0,
            maintenance INTEGER NOT NULL DEFAULT 0, unknown INTEGER NOT NULL DEFAULT 0,
            excluded_results INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (service, month)) WITHOUT ROWID""",
        ],
    ),
    (
        15,
        "the results probe agents deliver from other locations, and their batches",
        [
            """CREATE TABLE location_results (
            location TEXT NOT NULL, service TEXT NOT NULL, check_index INTEGER NOT NULL, ts INTEGER NOT NULL,
            outcome TEXT NOT NULL, latency_ms REAL, http_status INTEGER, slow INTEGER NOT NULL, detail TEXT,
            PRIMARY KEY (location, service, check_index, ts)) WITHOUT ROWID""",
            """CREATE TABLE batches (
            location TEXT NOT NULL, name TEXT NOT NULL, sent_at INTEGER NOT NULL, received_at INTEGER NOT NULL,
            results INTEGER NOT NULL, refused TEXT, PRIMARY KEY (location, name)) WITHOUT ROWID""",
        ],
    ),
    (
        16,
        "a location's failed results set aside when its own canaries failed",
        ["ALTER TABLE location_results ADD COLUMN flag TEXT"],
    ),
    (
        17,
        "refused batches apart from taken ones; the inbox's last listing; no result out of its shape",
        [
            """CREATE TABLE refusals (
            location TEXT NOT NULL, name TEXT NOT NULL, received_at INTEGER NOT NULL, reason TEXT NOT NULL)""",
            "CREATE INDEX refusals_by_location ON refusals (location, received_at)",
            "INSERT INTO refusals SELECT location, name, received_at, refused FROM batches WHERE refused IS NOT NULL",
            "DELETE FROM batches WHERE refused IS NOT NULL",
            """CREATE TABLE inbox_listing (
            one INTEGER PRIMARY KEY CHECK (one = 1), listed_at INTEGER NOT NULL,
            not_batches INTEGER NOT NULL, left_for_next INTEGER NOT NULL)""",
            # what an earlier version took without checking its shape: a run could not read it back
            """DELETE FROM location_results WHERE typeof(latency_ms) NOT IN ('null', 'integer', 'real')
            OR typeof(http_status) NOT IN ('null', 'integer') OR typeof(detail) NOT IN ('null', 'text')
            OR typeof(slow) != 'integer' OR typeof(check_index) != 'integer'""",
        ],
    ),
    (
        18,
        "visitors subscribed by email, what they are sent, and the mailbox's messages read",
        [
            # key: the address casefolded (one row per mailbox); services and asked_services: JSON
            # lists of slugs, [] the whole site; a request waiting for its confirmation: asked_*.
            """CREATE TABLE subscribers (
            id INTEGER PRIMARY KEY, address TEXT NOT NULL, key TEXT NOT NULL UNIQUE, token TEXT NOT NULL UNIQUE,
            state TEXT NOT NULL, services TEXT NOT NULL, language TEXT NOT NULL, created_at INTEGER NOT NULL,
            confirmed_at INTEGER, asked_services TEXT, asked_language TEXT, asked_at INTEGER,
            bounces INTEGER NOT NULL DEFAULT 0)""",
            # what each address asked lately, by its hash: kept apart, so that leaving and asking
            # again does not start its limits afresh
            """CREATE TABLE askers (
            hash TEXT PRIMARY KEY, day TEXT, requests INTEGER NOT NULL, confirmation_sent_at INTEGER,
            updated_at INTEGER NOT NULL) WITHOUT ROWID""",
            # an event subscribers are told of, once; the outbox, one row per event and subscriber,
            # with the states of notifications (pending, sending, sent, uncertain, expired)
            """CREATE TABLE mail_events (
            event TEXT PRIMARY KEY, service TEXT NOT NULL, queued_at INTEGER NOT NULL, body TEXT NOT NULL)""",
            """CREATE TABLE mail_outbox (
            event TEXT NOT NULL REFERENCES mail_events ON DELETE CASCADE,
            subscriber INTEGER NOT NULL REFERENCES subscribers ON DELETE CASCADE,
            state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, done_at INTEGER,
            answer TEXT, PRIMARY KEY (event, subscriber)) WITHOUT ROWID""",
            "CREATE INDEX mail_outbox_waiting ON mail_outbox (state, event)",
            "CREATE INDEX mail_outbox_by_subscriber ON mail_outbox (subscriber)",
            # the mailbox's messages already acted on, by a digest of what identifies each
            "CREATE TABLE mail_read (digest TEXT PRIMARY KEY, read_at INTEGER NOT NULL) WITHOUT ROWID",
        ],
    ),
]


def must_be_current(db: sqlite3.Connection, path: Path) -> None:
    """A reader's check: the store has every migration this statusgen knows (a reader never
    migrates; the run that writes does)."""
    known = MIGRATIONS[-1][0]
    recorded = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    have = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0] if recorded else 0
    if have != known:
        raise StoreError(
            f"{path}: the store's schema is version {have}, this statusgen reads version {known}; "
            "run statusgen run (or build) once to bring it up to date"
        )


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
