"""The monthly rollups: per service and UTC month, the seconds of each status and the results
set aside (``decide.reports``), kept for ``site.report_months`` after the raw results and buckets
are pruned. A run adds to them in its own transaction; nothing else writes them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from statusgen.decide.reports import STATUS_COLUMNS, Credits, Tally

COLUMNS = (*STATUS_COLUMNS, "excluded_results")
_ADD = (
    f"INSERT INTO months (service, month, {', '.join(COLUMNS)}) VALUES (?, ?{', ?' * len(COLUMNS)}) "
    "ON CONFLICT (service, month) DO UPDATE SET "
    + ", ".join(f"{c} = {c} + excluded.{c}" for c in COLUMNS)  # excluded: SQLite's name for the new row
)


def add_months(db: sqlite3.Connection, credits: Credits) -> None:
    db.executemany(
        _ADD,
        [
            (slug, month, *(t.seconds.get(s, 0) for s in STATUS_COLUMNS), t.excluded)
            for (slug, month), t in sorted(credits.items())
        ],
    )


def read_months(db: sqlite3.Connection, first: str) -> dict[str, dict[str, Tally]]:
    """Every service's months from ``first`` on: service -> month -> its tally."""
    out: dict[str, dict[str, Tally]] = {}
    for slug, month, *values in db.execute(
        f"SELECT service, month, {', '.join(COLUMNS)} FROM months WHERE month >= ? ORDER BY service, month", (first,)
    ):
        seconds: Mapping[str, int] = dict(zip(STATUS_COLUMNS, values, strict=False))
        out.setdefault(slug, {})[month] = Tally(dict(seconds), values[-1])
    return out


def prune_months(db: sqlite3.Connection, first: str) -> None:
    """Drop the months before ``first``."""
    db.execute("DELETE FROM months WHERE month < ?", (first,))
