"""The one cache of a build: the closed part of each service's histories, kept between builds.

A history's buckets but the last (the bucket in progress) stop changing once
the clock has left them, yet a build would read and sum every one of them,
for each of a service's four ranges, every cycle. This cache keeps them
(``decide.history.Closed``) in a SQLite file of its own beside the store
(``<store>.cache``), so that a build reads and makes only the bucket in
progress.

One rule decides whether an entry is used: its key is the key of what it
would be made from now. The key holds the range's window, the service's
incidents (their minutes are in the points), the number of results in the
closed buckets as the store counts them (every result a run stores adds one
to the bucket it falls in, so a late result in a closed bucket changes it),
the store's schema and this program's version. An entry made from other
inputs is made again and replaced. The file holds nothing the store does not:
delete it at any time, and the next build makes it again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import orjson
from isal import isal_zlib

from statusgen import __version__
from statusgen.decide.history import Closed, Span
from statusgen.render.tree import digest

FORMAT = 1  # of the entries: a change of how they are written makes every one again


def cache_path(store: Path) -> Path:
    return store.with_name(store.name + ".cache")


def entry_key(
    slug: str, range_name: str, window: tuple[int, int], spans: Sequence[Span], tally: tuple[int, int], schema: int
) -> str:
    """What a closed part is made from, as a short digest."""
    made_of = [FORMAT, __version__, schema, slug, range_name, *window, *tally, list(spans)]
    return digest(orjson.dumps(made_of))


class HistoryCache:
    """``get`` an entry by its key; ``put`` the entries made since, written in one transaction by
    ``save``. A cache that cannot be opened or read is no cache: every history is made anew."""

    def __init__(self, path: Path):
        self.path = path
        self.made: list[tuple[str, str, str, bytes]] = []
        try:
            self.db: sqlite3.Connection | None = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS closed (service TEXT NOT NULL, range TEXT NOT NULL, "
                "key TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (service, range)) WITHOUT ROWID"
            )
        except sqlite3.Error:
            self.db = None

    def entries(self, slug: str) -> dict[str, tuple[str, bytes]]:
        """The service's entries, by range: their key and body (``closed``)."""
        if self.db is None:
            return {}
        try:
            return {
                name: (key, body)
                for name, key, body in self.db.execute("SELECT range, key, body FROM closed WHERE service = ?", (slug,))
            }
        except sqlite3.Error:
            return {}

    @staticmethod
    def closed(body: bytes) -> Closed | None:
        """An entry's closed part; None for one that cannot be read."""
        try:
            return Closed.from_json(orjson.loads(isal_zlib.decompress(body)))
        except (isal_zlib.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):  # type: ignore[misc]  # isal's stubs declare error as an instance
            return None

    def put(self, slug: str, range_name: str, key: str, closed: Closed) -> None:
        self.made.append((slug, range_name, key, isal_zlib.compress(orjson.dumps(closed.to_json()), 1)))

    def save(self) -> None:
        """Write what was made since the last save (a cache that cannot be written is skipped)."""
        made, self.made = self.made, []
        if self.db is None or not made:
            return
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("INSERT OR REPLACE INTO closed VALUES (?, ?, ?, ?)", made)
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
