"""``statusgen backup FILE``: a consistent copy of the live store, made while runs go on.

SQLite's online backup copies the store as one read transaction sees it. In WAL mode a reader
neither waits for a writer nor holds one up, so a run in progress goes on, and the copy is the
store as of the last transaction committed before the copy began: a run's writes are all in it
or none. The copy is made whole in one step (the backup API restarts a copy made a few pages at
a time whenever another process writes, and a live store is written every interval).

The copy is written beside ``FILE`` under a temporary name, checked (``quick_check``), flushed
and only then renamed to ``FILE``: a backup that fails or is killed never leaves half a store
under the name a restore would take. It is a plain single file (journal mode DELETE), so a
restore is a copy of that one file.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from statusgen.errors import StoreError
from statusgen.store.failures import RESTORE, store_failure


@dataclass(frozen=True)
class Backup:
    """A copy made: where, of what, how large, and the schema version it holds."""

    store: Path
    copy: Path
    size: int
    schema_version: int

    def line(self) -> str:
        return f"{self.copy}: a copy of {self.store} ({self.size:,} bytes, schema version {self.schema_version})"


def backup_store(store: Path, copy: Path) -> Backup:
    """Copy the store at ``store`` to ``copy`` (replaced if it exists) with SQLite's online backup."""
    if not store.is_file() or store.stat().st_size == 0:
        raise StoreError(f"{store}: no store here to back up (missing or empty)")
    if copy.exists() and copy.resolve() == store.resolve():
        raise StoreError(f"{copy}: that is the store itself; name another file for its copy")
    partial = copy.with_name(f".{copy.name}.partial-{os.getpid()}")
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        _copy_into(store, partial)
        os.replace(partial, copy)
        _flush_folder(copy.parent)
    except sqlite3.Error as exc:
        raise store_failure(store, exc, "back up the store") from None
    except OSError as exc:
        raise store_failure(copy, exc, "write the copy") from None
    finally:
        partial.unlink(missing_ok=True)
    return Backup(store, copy, copy.stat().st_size, _schema_version(copy))


def _copy_into(store: Path, partial: Path) -> None:
    source = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        partial.unlink(missing_ok=True)
        target = sqlite3.connect(partial, isolation_level=None)
        try:
            source.backup(target)  # pages=-1: the whole store in one step, one read transaction
            target.execute("PRAGMA journal_mode=DELETE")  # one file, without a -wal beside it
            problems = [row[0] for row in target.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise StoreError(f"{store}: the store is damaged (quick_check of its copy: {problems[0]}): {RESTORE}")
        finally:
            target.close()
    finally:
        source.close()
    with partial.open("rb") as f:
        os.fsync(f.fileno())


def _flush_folder(folder: Path) -> None:
    """The rename reaches the disk: a crash right after the backup keeps the new copy, not the old."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _schema_version(copy: Path) -> int:
    db = sqlite3.connect(f"{copy.resolve().as_uri()}?mode=ro", uri=True)
    try:
        found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
        return int(db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]) if found else 0
    finally:
        db.close()
