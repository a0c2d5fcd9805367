"""The visitors subscribed by email, the messages due to them, and the mailbox's messages read.

The addresses live here and nowhere else: not in the tree, the JSON or the logs. What a run sends
them goes through an outbox with the notifications' states (``mail_outbox``): queued with the
run's decisions (``queue_mail``, in the run's transaction), each message marked "sending" before
it is handed to the mail server and "sent" after (``mail_sending``, ``mail_done``); one a stopped
run left "sending" becomes "uncertain" and is never sent again (``interrupted_mail``). A removed
subscriber's rows go with them (``ON DELETE CASCADE``), so nobody who left is sent anything.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from statusgen.decide.subscribers import (
    CONFIRM_WITHIN,
    CONFIRMED,
    PENDING,
    Asking,
    Subscriber,
    address_hash,
    address_key,
)
from statusgen.store.failures import guarded_method
from statusgen.store.records import MailEvent, MailItem
from statusgen.timeutil import from_epoch, to_epoch

MAIL_RETENTION_S = 30 * 86400  # messages sent or given up, and the mailbox's messages read
GIVE_UP_S = 7 * 86400  # a message not sent in a week is not sent (as notifications)
COLUMNS = (
    "address, token, state, services, language, created_at, confirmed_at, asked_services, asked_language, "
    "asked_at, bounces, id"
)
ASKERS_KEPT_S = 2 * 86400  # past a day's count and an hour's wait, what an address asked is forgotten


def _epoch(at: datetime | None) -> int | None:
    return to_epoch(at) if at is not None else None


def _time(value: int | None) -> datetime | None:
    return from_epoch(value) if value is not None else None


def _slugs(value: str | None) -> tuple[str, ...] | None:
    return tuple(orjson.loads(value)) if value is not None else None


def _row(s: Subscriber) -> tuple[Any, ...]:
    asked = orjson.dumps(list(s.asked_services)).decode() if s.asked_services is not None else None
    return (
        s.address,
        s.key,
        s.token,
        s.state,
        orjson.dumps(list(s.services)).decode(),
        s.language,
        to_epoch(s.created_at),
        _epoch(s.confirmed_at),
        asked,
        s.asked_language,
        _epoch(s.asked_at),
        s.bounces,
    )


def _subscriber(row: Sequence[Any]) -> Subscriber:
    return Subscriber(
        row[0],
        row[1],
        row[2],
        _slugs(row[3]) or (),
        row[4],
        from_epoch(row[5]),
        _time(row[6]),
        _slugs(row[7]),
        row[8],
        _time(row[9]),
        row[10],
        row[11],
    )


def save_subscriber(db: sqlite3.Connection, s: Subscriber) -> None:
    """Write ``s``: a new address, or the one of its key as it now is."""
    db.execute(
        "INSERT INTO subscribers (address, key, token, state, services, language, created_at, confirmed_at, "
        "asked_services, asked_language, asked_at, bounces) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (key) DO UPDATE SET address = excluded.address, "
        "token = excluded.token, state = excluded.state, services = excluded.services, "
        "language = excluded.language, confirmed_at = excluded.confirmed_at, "
        "asked_services = excluded.asked_services, asked_language = excluded.asked_language, "
        "asked_at = excluded.asked_at, bounces = excluded.bounces",
        _row(s),
    )


def queue_mail(db: sqlite3.Connection, events: Sequence[MailEvent], now: datetime) -> None:
    """Each event, and a message of it due to each confirmed subscriber of its service; an event
    queued before (a re-run deciding it again) is left as it is."""
    t = to_epoch(now)
    for e in events:
        new = db.execute("INSERT OR IGNORE INTO mail_events VALUES (?,?,?,?)", (e.event, e.service, t, e.body)).rowcount
        if new:
            db.execute(
                "INSERT INTO mail_outbox (event, subscriber) SELECT ?, id FROM subscribers WHERE state = ? "
                "AND (services = '[]' OR EXISTS (SELECT 1 FROM json_each(subscribers.services) WHERE value = ?))",
                (e.event, CONFIRMED, e.service),
            )


def prune_mail(db: sqlite3.Connection, t: int) -> None:
    """Forget what was sent or given up, and the messages read, past ``MAIL_RETENTION_S``."""
    cut = t - MAIL_RETENTION_S
    db.execute(
        "DELETE FROM mail_events WHERE queued_at < ? AND NOT EXISTS (SELECT 1 FROM mail_outbox o "
        "WHERE o.event = mail_events.event AND o.state = 'pending')",
        (cut,),
    )
    db.execute("DELETE FROM mail_read WHERE read_at < ?", (cut,))
    db.execute("DELETE FROM askers WHERE updated_at < ?", (t - ASKERS_KEPT_S,))


class SubscriberStore:
    """The store's methods for subscriptions (``Store`` has them): each SQLite error is a StoreError."""

    db: sqlite3.Connection
    path: Path

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # -- the subscribers --------------------------------------------------------------------

    @guarded_method
    def subscriber(self, address: str) -> Subscriber | None:
        row = self.db.execute(f"SELECT {COLUMNS} FROM subscribers WHERE key = ?", (address_key(address),)).fetchone()
        return _subscriber(row) if row else None

    @guarded_method
    def subscriber_by_token(self, token: str) -> Subscriber | None:
        row = self.db.execute(f"SELECT {COLUMNS} FROM subscribers WHERE token = ?", (token,)).fetchone()
        return _subscriber(row) if row else None

    @guarded_method
    def subscriber_by_id(self, id_: int) -> Subscriber | None:
        row = self.db.execute(f"SELECT {COLUMNS} FROM subscribers WHERE id = ?", (id_,)).fetchone()
        return _subscriber(row) if row else None

    @guarded_method
    def subscribers(self) -> list[Subscriber]:
        """Every address, the oldest first (``statusgen subscribers --export``)."""
        return [_subscriber(r) for r in self.db.execute(f"SELECT {COLUMNS} FROM subscribers ORDER BY id")]

    @guarded_method
    def subscriber_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM subscribers").fetchone()[0])

    @guarded_method
    def subscriber_counts(self) -> tuple[Counter[str], int, int]:
        """Confirmed subscribers by service ("" for the whole site), those waiting for a first
        confirmation, and the confirmed asking for a change."""
        by_service: Counter[str] = Counter()
        for (services,) in self.db.execute("SELECT services FROM subscribers WHERE state = ?", (CONFIRMED,)):
            for slug in orjson.loads(services) or [""]:
                by_service[slug] += 1
        (pending,) = self.db.execute("SELECT count(*) FROM subscribers WHERE state = ?", (PENDING,)).fetchone()
        (asking,) = self.db.execute(
            "SELECT count(*) FROM subscribers WHERE state = ? AND asked_at IS NOT NULL", (CONFIRMED,)
        ).fetchone()
        return by_service, int(pending), int(asking)

    @guarded_method
    def asking(self, address: str) -> Asking:
        """What ``address`` asked lately (nothing, once ``ASKERS_KEPT_S`` passed)."""
        row = self.db.execute(
            "SELECT day, requests, confirmation_sent_at FROM askers WHERE hash = ?", (address_hash(address),)
        ).fetchone()
        return Asking(row[0], row[1], _time(row[2])) if row else Asking()

    @guarded_method
    def save_subscribers(
        self,
        saved: Iterable[Subscriber],
        removed: Iterable[Subscriber],
        read: Iterable[str],
        now: datetime,
        asked: Iterable[tuple[str, Asking]] = (),
    ) -> None:
        """One message's outcome, at once: the subscribers it changed and removed, what the
        addresses ``asked`` (by address), and the digests of the mailbox's messages it was read
        from (never acted on twice)."""
        t = to_epoch(now)
        with self.transaction() as db:
            for s in saved:
                save_subscriber(db, s)
            db.executemany("DELETE FROM subscribers WHERE key = ?", [(s.key,) for s in removed])
            db.executemany(
                "INSERT OR REPLACE INTO askers VALUES (?,?,?,?,?)",
                [(address_hash(a), k.day, k.requests, _epoch(k.confirmation_sent_at), t) for a, k in asked],
            )
            db.executemany("INSERT OR IGNORE INTO mail_read VALUES (?,?)", [(d, t) for d in read])

    @guarded_method
    def remove_subscriber(self, address: str) -> bool:
        with self.transaction() as db:
            return db.execute("DELETE FROM subscribers WHERE key = ?", (address_key(address),)).rowcount > 0

    @guarded_method
    def expire_requests(self, now: datetime) -> int:
        """Requests not confirmed within ``CONFIRM_WITHIN``: an address never confirmed is removed,
        a subscriber's request for a change forgotten. Returns how many."""
        cut = to_epoch(now - CONFIRM_WITHIN)
        with self.transaction() as db:
            gone = db.execute("DELETE FROM subscribers WHERE state = ? AND asked_at < ?", (PENDING, cut)).rowcount
            kept = db.execute(
                "UPDATE subscribers SET asked_services = NULL, asked_language = NULL, asked_at = NULL "
                "WHERE state = ? AND asked_at < ?",
                (CONFIRMED, cut),
            ).rowcount
            return int(gone + kept)

    @guarded_method
    def already_read(self, digests: Iterable[str]) -> set[str]:
        """Those of ``digests`` a run has acted on."""
        found: set[str] = set()
        for d in digests:
            if self.db.execute("SELECT 1 FROM mail_read WHERE digest = ?", (d,)).fetchone():
                found.add(d)
        return found

    # -- the outbox ---------------------------------------------------------------------------

    @guarded_method
    def interrupted_mail(self) -> int:
        """Mark what a run left "sending" as uncertain (never sent again). Returns how many."""
        with self.transaction() as db:
            return db.execute("UPDATE mail_outbox SET state = 'uncertain' WHERE state = 'sending'").rowcount

    @guarded_method
    def expire_mail(self, now: datetime) -> int:
        """Give up the messages that waited longer than ``GIVE_UP_S``. Returns how many."""
        with self.transaction() as db:
            return db.execute(
                "UPDATE mail_outbox SET state = 'expired', done_at = ? WHERE state = 'pending' AND event IN "
                "(SELECT event FROM mail_events WHERE queued_at < ?)",
                (to_epoch(now), to_epoch(now) - GIVE_UP_S),
            ).rowcount

    @guarded_method
    def waiting_mail(self, limit: int) -> list[MailItem]:
        """The messages due, oldest event first, at most ``limit`` (each event's body read once)."""
        due = self.db.execute(
            "SELECT o.event, o.subscriber FROM mail_outbox o JOIN mail_events e USING (event) "
            "WHERE o.state = 'pending' ORDER BY e.queued_at, o.event, o.subscriber LIMIT ?",
            (limit,),
        ).fetchall()
        events: dict[str, tuple[int, str]] = {}
        for event in dict.fromkeys(e for e, _ in due):
            (queued_at, body) = self.db.execute(
                "SELECT queued_at, body FROM mail_events WHERE event = ?", (event,)
            ).fetchone()
            events[event] = (queued_at, body)
        return [MailItem(e, s, from_epoch(events[e][0]), events[e][1]) for e, s in due]

    @guarded_method
    def mail_sending(self, item: MailItem) -> bool:
        """Mark a message "sending", before it is handed over; False when it is no longer due (its
        subscriber left)."""
        with self.transaction() as db:
            return (
                db.execute(
                    "UPDATE mail_outbox SET state = 'sending', attempts = attempts + 1 "
                    "WHERE event = ? AND subscriber = ? AND state = 'pending'",
                    (item.event, item.subscriber),
                ).rowcount
                > 0
            )

    @guarded_method
    def mail_done(self, item: MailItem, state: str, answer: str, now: datetime) -> None:
        """How sending went: sent; pending again (the server refused it for now); refused (for good);
        uncertain."""
        with self.transaction() as db:
            db.execute(
                "UPDATE mail_outbox SET state = ?, answer = ?, done_at = ? WHERE event = ? AND subscriber = ?",
                (state, answer, to_epoch(now), item.event, item.subscriber),
            )

    @guarded_method
    def mail_counts(self) -> dict[str, int]:
        """The outbox's messages by state (``statusgen subscribers``, health)."""
        return dict(self.db.execute("SELECT state, count(*) FROM mail_outbox GROUP BY state"))
