"""``statusgen doctor``: every stored value read back, the damaged ones named, and, with
``--repair``, dropped and rebuilt from the rest where the rest holds them.

SQLite's own check (``quick_check``, run as every store opens) finds damaged pages, not a value
whose bytes changed inside a sound page: a deflated block that no longer inflates, JSON that no
longer parses, a histogram cut short. A run or build meeting one stops with one line naming it
(exit 3); this reads them all.

What a repair does, by table:

    result_hours    dropped, then made again from the results, which the store keeps for the
                    same two days (lost only where those results were pruned)
    buckets         the latency histogram dropped; the bucket's counts and percentiles stay
    service_state   dropped: the next run decides the service afresh from its results
    incidents       dropped: that incident is lost
    vendor_sources  its last view and body dropped: the next run fetches the source again
    notifications   dropped: that event is not sent
    location_results  dropped: that result of a probe agent is lost
    subscribers     services asked for: the request forgotten (a confirmed subscriber keeps
                    what they had); services chosen, or a waiting address's request: the
                    address removed, since sending what nobody chose is worse than sending
                    nothing (they can subscribe again)
    mail_events     dropped, with its messages: that event is not sent to subscribers

The subscribers, their outbox and the record of the mailbox's messages read are otherwise left
as they are: a repair never drops an address it can read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from statusgen import latency
from statusgen.decide.incidents import Incident
from statusgen.decide.state import ServiceState
from statusgen.decide.subscribers import CONFIRMED, address_hash
from statusgen.store.database import Store
from statusgen.store.failures import DECODING
from statusgen.store.hours import inflated, write_hours
from statusgen.timeutil import iso_epoch


@dataclass(frozen=True)
class Damage:
    """One stored value that does not read back."""

    table: str
    key: tuple[Any, ...]  # its row's primary key
    service: str
    at: int | None  # the time it is of, epoch seconds
    what: str
    reason: str

    @property
    def of(self) -> str:
        """What it is, whose, and of when."""
        owner = {"notifications": "notifier", "subscribers": "subscriber"}.get(self.table, "service")
        when = f" at {iso_epoch(self.at)}" if self.at is not None else ""
        return f"the {self.what} of {owner} {self.service!r}{when}"

    def line(self) -> str:
        return f"damaged: {self.of} ({self.table}): {self.reason}"


def _table(value: Any) -> None:
    if not isinstance(value, dict):
        raise TypeError(f"a JSON object was stored, this is a {type(value).__name__}")


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:200]


def _hours(store: Store) -> list[Damage]:
    found = []
    for service, hour, n, rows in store.db.execute("SELECT service, hour, n, rows FROM result_hours"):
        try:
            count = len(orjson.loads("[" + inflated(rows) + "]"))
            reason = None if count == n else f"holds {count} results where {n} were written"
        except DECODING as exc:
            reason = _reason(exc)
        if reason:
            found.append(Damage("result_hours", (service, hour), service, hour, "results of the hour", reason))
    return found


def _buckets(store: Store) -> list[Damage]:
    found = []
    rows = store.db.execute("SELECT service, res, start, hist FROM buckets WHERE hist IS NOT NULL")
    for service, res, start, hist in rows:
        try:
            latency.decode(hist)
        except DECODING as exc:
            what = f"latency histogram of the {res}-second bucket"
            found.append(Damage("buckets", (service, res, start), service, start, what, _reason(exc)))
    return found


#: A probe agent's result whose columns a run cannot read back (an earlier version stored what an
#: agent sent without checking its shape).
_LOCATION_RESULT_OFF = """typeof(latency_ms) NOT IN ('null', 'integer', 'real')
    OR typeof(http_status) NOT IN ('null', 'integer') OR typeof(detail) NOT IN ('null', 'text')
    OR typeof(slow) != 'integer'"""


def _location_results(store: Store) -> list[Damage]:
    rows = store.db.execute(
        f"SELECT location, service, check_index, ts FROM location_results WHERE {_LOCATION_RESULT_OFF}"
    )
    return [
        Damage("location_results", key, key[1], key[3], f"result of check {key[2] + 1} from {key[0]}", "not a result")
        for key in rows
    ]


def _json_rows(store: Store, table: str, sql: str, what: str, read: Any) -> list[Damage]:
    found = []
    for service, at, key, value in store.db.execute(sql):
        try:
            read(orjson.loads(value))
        except DECODING as exc:
            found.append(Damage(table, key if isinstance(key, tuple) else (key,), service, at, what, _reason(exc)))
    return found


def _states(store: Store) -> list[Damage]:
    sql = "SELECT service, NULL, service, state FROM service_state"
    return _json_rows(store, "service_state", sql, "state", ServiceState.from_json)


def _incidents(store: Store) -> list[Damage]:
    sql = "SELECT service, started_at, id, record FROM incidents"
    return _json_rows(store, "incidents", sql, "incident", Incident.from_json)


def _vendor_views(store: Store) -> list[Damage]:
    sql = "SELECT service, NULL, service, view FROM vendor_sources WHERE view IS NOT NULL"
    return _json_rows(store, "vendor_sources", sql, "last vendor view", _table)


def _notifications(store: Store) -> list[Damage]:
    sql = "SELECT notifier, queued_at, event || char(0) || notifier, body FROM notifications"
    return _json_rows(store, "notifications", sql, "queued notification", _table)


def _slug_list(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"a JSON list of service slugs was stored, this is a {type(value).__name__}")


def _subscribers(store: Store) -> list[Damage]:
    """A subscriber's services, chosen or asked for (logs and lines name them by address_hash)."""
    found = []
    rows = store.db.execute("SELECT id, key, created_at, services, asked_services FROM subscribers")
    for id_, key, created_at, services, asked in rows:
        for column, value, what in (("services", services, "services chosen"), ("asked_services", asked, "request")):
            if value is None and column == "asked_services":
                continue  # nothing asked for
            try:
                _slug_list(orjson.loads(value))
            except DECODING as exc:
                found.append(Damage("subscribers", (id_, column), address_hash(key), created_at, what, _reason(exc)))
    return found


def _mail_events(store: Store) -> list[Damage]:
    sql = "SELECT service, queued_at, event, body FROM mail_events"
    return _json_rows(store, "mail_events", sql, "event queued for subscribers", _table)


#: Each table's reading, in the order ``examine`` goes through them.
READINGS: tuple[Callable[[Store], list[Damage]], ...] = (
    _hours,
    _buckets,
    _states,
    _incidents,
    _vendor_views,
    _notifications,
    _location_results,
    _subscribers,
    _mail_events,
)


def examine(store: Store, progress: Callable[[int], None] = lambda _: None) -> list[Damage]:
    """Every stored value that does not read back, table by table (``progress`` is told of each
    table read: ``len(READINGS)`` in all)."""
    found = []
    for reading in READINGS:
        found += reading(store)
        progress(1)
    return found


def repair(store: Store, damages: list[Damage]) -> list[str]:
    """Drop the damaged values and rebuild what the rest holds, in one transaction; a line for each
    saying what became of it."""
    told = []
    with store.transaction() as db:
        for d in damages:
            told.append(_repair_one(db, d))
        db.executemany(
            "INSERT INTO service_data VALUES (?, 1) ON CONFLICT (service) DO UPDATE SET version = version + 1",
            sorted({(d.service,) for d in damages if d.table in ("result_hours", "buckets")}),
        )
    return told


def _repair_one(db: Any, d: Damage) -> str:
    of = d.of
    if d.table == "result_hours":
        db.execute("DELETE FROM result_hours WHERE service = ? AND hour = ?", d.key)
        write_hours(db, [d.key])
        again = db.execute("SELECT n FROM result_hours WHERE service = ? AND hour = ?", d.key).fetchone()
        return f"rebuilt {of} from its {again[0]} results" if again else f"dropped {of}: its results were pruned"
    if d.table == "buckets":
        db.execute("UPDATE buckets SET hist = NULL WHERE service = ? AND res = ? AND start = ?", d.key)
        return f"dropped {of}; its counts and percentiles stay"
    if d.table == "service_state":
        db.execute("DELETE FROM service_state WHERE service = ?", d.key)
        return f"dropped {of}: the next run decides it afresh"
    if d.table == "incidents":
        db.execute("DELETE FROM incidents WHERE id = ?", d.key)
        return f"dropped {of} ({d.key[0]}): that incident is lost"
    if d.table == "vendor_sources":
        db.execute(
            "UPDATE vendor_sources SET view = NULL, body = NULL, etag = NULL, last_modified = NULL WHERE service = ?",
            d.key,
        )
        return f"dropped {of}: the next run fetches the source again"
    if d.table == "location_results":
        db.execute(
            "DELETE FROM location_results WHERE location = ? AND service = ? AND check_index = ? AND ts = ?", d.key
        )
        return f"dropped {of}"
    if d.table in ("subscribers", "mail_events"):
        return _repair_mail(db, d)
    event, notifier = d.key[0].split("\0")
    db.execute("DELETE FROM notifications WHERE event = ? AND notifier = ?", (event, notifier))
    return f"dropped {of}: that event is not sent"


def _repair_mail(db: Any, d: Damage) -> str:
    of = d.of
    if d.table == "mail_events":
        db.execute("DELETE FROM mail_events WHERE event = ?", d.key)  # its outbox rows go with it
        return f"dropped {of} ({d.key[0]}): it is not sent"
    id_, column = d.key
    if column == "asked_services":
        kept = db.execute(
            "UPDATE subscribers SET asked_services = NULL, asked_language = NULL, asked_at = NULL "
            "WHERE id = ? AND state = ?",
            (id_, CONFIRMED),
        ).rowcount
        if kept:
            return f"dropped {of}: forgotten; they keep what they had and can ask again"
    db.execute("DELETE FROM subscribers WHERE id = ?", (id_,))
    return f"dropped {of}: the address is removed and can subscribe again"
