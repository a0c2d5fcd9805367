"""The store's boundary: SQLite's and the file system's errors as one ``StoreError`` line that
names the store's file and what to do; and the checks that refuse a store before it is used."""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from isal import isal_zlib

from statusgen.errors import StoreError
from statusgen.timeutil import iso_epoch

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


def guarded_method(method: Method) -> Method:
    """The method, with any error of SQLite raised as the store's (a disk that fills during a run,
    a page found damaged while reading)."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_failure(self.path, exc) from None

    return cast(Method, guarded)


def must_hold_data(path: Path) -> None:
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


def check_once(db: sqlite3.Connection, path: Path) -> None:
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


#: What decoding a damaged stored value raises: a deflated block that does not inflate, JSON that
#: does not parse, a record without its fields, a histogram cut short. SQLite cannot see such
#: damage (``quick_check`` checks pages, not the values in them).
INFLATING = cast(type[BaseException], isal_zlib.error)  # isal's stubs type its error class as an instance
DECODING = (INFLATING, ValueError, TypeError, KeyError, IndexError, AttributeError)

DOCTOR = "run statusgen doctor to list what is damaged, and statusgen doctor --repair to drop it and rebuild the rest"


def damaged(path: Path | None, what: str, service: str, at: int | None = None) -> StoreError:
    """A stored value that does not decode, as one line naming the service, the time and what to do
    (and the store's file, where the reader knows it)."""
    where = f"{path}: " if path is not None else "the store: "
    when = f" at {iso_epoch(at)}" if at is not None else ""
    return StoreError(f"{where}a stored value is damaged, the {what} of service {service!r}{when}: {DOCTOR}")
