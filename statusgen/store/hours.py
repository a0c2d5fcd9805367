"""A service's results as the record publishes them, kept in hourly blocks.

Each result's published row is made by SQLite when the result is written (``ROW_SQL``); the rows
of a service's hour are kept together, deflated, in ``result_hours``, rewritten with every write
of its results, so that a build reads a service's last day in a few pages.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from isal import isal_zlib

HOUR = 3600
# A result as the service record publishes it, made by SQLite when the result is written:
# [at, check, outcome, latency_ms, http_status, slow, flag]
ROW_SQL = (
    "json_array(strftime('%Y-%m-%dT%H:%M:%SZ', ts, 'unixepoch'), check_index + 1, outcome, latency_ms, "
    "http_status, json(CASE slow WHEN 0 THEN 'false' ELSE 'true' END), flag)"
)
# A service's rows of one span of time, in order, as the record publishes them: their count and text.
SPAN_ROWS = (
    "SELECT count(*), ifnull(group_concat(row, ','), '') FROM "
    "(SELECT row FROM results WHERE service = ? AND ts >= ? AND ts < ? ORDER BY ts, check_index)"
)


def write_hours(db: sqlite3.Connection, hours: Iterable[tuple[str, int]]) -> None:
    """Rewrite the blocks of these (service, hour) from the results (an hour left empty goes)."""
    blocks = [(svc, hour, *db.execute(SPAN_ROWS, (svc, hour, hour + HOUR)).fetchone()) for svc, hour in sorted(hours)]
    db.executemany(
        "INSERT OR REPLACE INTO result_hours VALUES (?,?,?,?)",
        [(svc, hour, n, deflated(text)) for svc, hour, n, text in blocks if n],
    )
    db.executemany(
        "DELETE FROM result_hours WHERE service = ? AND hour = ?", [(svc, hour) for svc, hour, n, _ in blocks if not n]
    )


def write_all_hours(db: sqlite3.Connection, after: int = 0) -> None:
    """The blocks of every hour holding a result written after rowid ``after`` (a migrated
    store: all of them; a simulated service as it is loaded)."""
    write_hours(
        db,
        db.execute(f"SELECT DISTINCT service, ts / {HOUR} * {HOUR} FROM results WHERE rowid > ?", (after,)).fetchall(),
    )


# A service's hour of published rows, deflated: a day of them is some 12 KB against 250 KB of rows.
def deflated(rows: str) -> bytes:
    return isal_zlib.compress(rows.encode(), 1)


def inflated(rows: bytes) -> str:
    return isal_zlib.decompress(rows).decode()
