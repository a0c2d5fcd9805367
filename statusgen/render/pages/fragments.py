"""Render: the one cache, of the parts of pages drawn from histories.

A service page is made again whenever one of its histories changes: the
24-hour one every five minutes, as its buckets close. Its other panels and its
day-by-day table change far less often (hourly, every six hours, daily), and
drawing them is most of the page's cost; the front page, made every build,
shows a bar of each service's 90-day history. So each of these is kept
between builds under the key of the history it is drawn from
(``keys.HistoryInputs``: the history's window, the results its
buckets hold, the service's incidents, and the site's settings, code and
templates), in one SQLite file of its own beside the output's generations,
``<output>.gens/.fragments``: a process reads those a file needs together,
never the whole file. The 24-hour panel is not kept: its history changes
with nearly every page made.

One rule: after a build that drew any, the file holds the fragments of the
histories that build served (those of a page it kept too), and no other.
A file that is missing, unreadable or of another format is an empty cache
(and is made anew): deleting it costs one build's drawing, nothing else. It is
not part of the store of record, nor of the tree; like the tree, it is
statusgen's own output (what it holds is HTML its templates escaped), and is
read as such.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from statusgen.render.tree import gens_dir

FORMAT = 1  # PRAGMA user_version of the file: another one is an empty cache
FILE = ".fragments"
log = logging.getLogger("statusgen")


@dataclass(frozen=True)
class Drawn:
    """The fragments a process found live and those it drew (sent back by a worker process)."""

    live: set[str] = field(default_factory=set)
    new: dict[str, str] = field(default_factory=dict)


class Fragments:
    """An output's cache of fragments, read when first needed, and what this process found live
    and drew. Each process reads the file with a Fragments (a connection) of its own."""

    def __init__(self, output: Path):
        self.path = gens_dir(output) / FILE
        self.drawn = Drawn()
        self._db: sqlite3.Connection | None = None
        self._readable = True

    def live(self, keys: Iterable[str]) -> None:
        """These fragments are of what this build serves, whether or not its pages draw them: they
        stay in the cache."""
        self.drawn.live.update(keys)

    def get(self, draws: dict[str, Callable[[], Markup]]) -> dict[str, Markup]:
        """The fragment of each key of ``draws``: the last build's (read together), else drawn now
        by the key's function."""
        self.drawn.live.update(draws)
        found = self._read(list(draws))
        out = {}
        for key, draw in draws.items():
            html = found.get(key)
            if html is None:
                made = draw()
                self.drawn.new[key] = str(made)
                out[key] = made
            else:
                out[key] = Markup(html)  # drawn by a template of this code (the key holds it), escaped there
        return out

    def absorb(self, drawn: Drawn) -> None:
        """What another process found live and drew, as if here."""
        self.drawn.live.update(drawn.live)
        self.drawn.new.update(drawn.new)

    def _read(self, keys: list[str]) -> dict[str, str]:
        if not self._readable or not keys:
            return {}
        try:
            if self._db is None:
                if not self.path.is_file():
                    self._readable = False
                    return {}
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
                if self._db.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                    raise sqlite3.DatabaseError("another format")
            marks = ", ".join("?" * len(keys))
            rows = self._db.execute(f"SELECT key, html FROM fragments WHERE key IN ({marks})", keys).fetchall()
        except sqlite3.Error:
            self._readable = False  # an empty cache: what is missing is drawn, and the file made anew
            return {}
        return {str(key): str(html) for key, html in rows}

    def save(self) -> None:
        """Keep the drawn fragments and forget those no longer live, when this build drew any. The
        file is not flushed to the disk: one lost costs a build's drawing."""
        if not self.drawn.new:
            return
        if self._db is not None:
            self._db.close()
            self._db = None
        try:
            self._write()
        except sqlite3.Error as exc:  # a damaged file: made anew
            log.info("%s: made anew (%s)", self.path, exc)
            self.path.unlink(missing_ok=True)
            try:
                self._write()
            except (sqlite3.Error, OSError) as again:
                self._lost(again)
        except OSError as exc:
            self._lost(exc)

    def _write(self) -> None:
        with closing(sqlite3.connect(self.path, isolation_level=None)) as db:
            db.execute("PRAGMA synchronous = OFF")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            db.execute("BEGIN IMMEDIATE")
            if version != FORMAT:
                db.execute("DROP TABLE IF EXISTS fragments")
                db.execute("CREATE TABLE fragments (key TEXT PRIMARY KEY, html TEXT NOT NULL) WITHOUT ROWID")
                db.execute(f"PRAGMA user_version = {FORMAT}")
            # Forgotten before the new are kept: these take the pages those leave, and the file
            # stays the size of what it holds (a file of free pages between fragments reads slowly).
            db.execute("CREATE TEMP TABLE live (key TEXT PRIMARY KEY) WITHOUT ROWID")
            db.executemany("INSERT OR IGNORE INTO live VALUES (?)", ((k,) for k in self.drawn.live))
            db.execute("DELETE FROM fragments WHERE key NOT IN (SELECT key FROM live)")
            db.executemany("INSERT OR REPLACE INTO fragments VALUES (?, ?)", self.drawn.new.items())
            db.execute("COMMIT")

    def _lost(self, exc: BaseException) -> None:
        """The site is built: a cache not kept costs the next build's drawing."""
        log.warning("%s: cannot keep the drawn fragments (%s)", self.path, exc)
        with suppress(OSError):
            self.path.unlink(missing_ok=True)
