"""The subscribers' messages, exactly once: queued with a run's decisions, sent after its build.

A run's events (``notify.outbox.run_events``) that the subscriptions send (``events``,
``min_severity``) are queued in the run's own transaction (``mail_events``; the store adds a
row for each confirmed subscriber of the event's service). ``deliver`` then sends what waits,
through one connection to the mail server, one message at a time:

1. what a stopped run left "sending" becomes uncertain, never sent again (it may have arrived);
2. what waited past a week is given up;
3. each message is marked "sending" before it is handed over, and "sent" once the server took
   it. A subscriber who left since is skipped (their rows went with them). The server refusing a
   recipient for good ("refused") counts as a bounce; refusing it for now (4xx) leaves the
   message waiting for the next run.

At most ``send_per_run`` messages a run: the rest wait for the next.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from functools import lru_cache

import orjson

from statusgen.config import Config, SubscriptionsConfig
from statusgen.config.secrets import MissingSecret
from statusgen.decide.subscribers import Subscriber, address_hash, bounced, hidden
from statusgen.notify.events import Event, severe_enough
from statusgen.store import Store
from statusgen.store.records import MailEvent, MailItem
from statusgen.subscribe.compose import update
from statusgen.subscribe.sender import MailServerError, Sender, SendFailed, open_sender

log = logging.getLogger("statusgen")


def mail_events(config: Config, events: Sequence[Event]) -> list[MailEvent]:
    """The events of a run the subscribers are sent (to those of each event's service)."""
    subs = config.subscriptions
    if subs is None:
        return []
    return [
        MailEvent(e.id, e.service, orjson.dumps(e.to_json()).decode())
        for e in events
        if e.kind in subs.events and severe_enough(e, subs.min_severity)
    ]


@dataclass(frozen=True)
class MailDelivery:
    sent: int
    failed: int  # refused, or to try again
    uncertain: int  # left "sending" by a stopped run, or lost with the connection


def deliver(store: Store, config: Config, now: datetime, env: Mapping[str, str]) -> MailDelivery:
    """Send what waits for the subscribers (the module's steps) and record how each went."""
    subs = config.subscriptions
    if subs is None:
        return MailDelivery(0, 0, 0)
    lost = store.interrupted_mail()
    if lost:
        log.warning("subscriptions: %d messages were being sent when a run stopped; they are not sent again", lost)
    expired = store.expire_mail(now)
    if expired:
        log.warning("subscriptions: %d messages waited a week without being sent; given up", expired)
    items = store.waiting_mail(subs.send_per_run)
    if not items:
        return MailDelivery(0, 0, lost)
    sent = failed = 0
    event_of = lru_cache(maxsize=64)(lambda body: Event.from_json(orjson.loads(body)))
    subscribers: dict[int, Subscriber | None] = {}
    try:
        with open_sender(subs, env) as sender:
            for item in items:
                if item.subscriber not in subscribers:
                    subscribers[item.subscriber] = store.subscriber_by_id(item.subscriber)
                to = subscribers[item.subscriber]
                if to is None or not store.mail_sending(item):
                    continue
                outcome = _send(sender, update(config, subs, event_of(item.body), to, now))
                if outcome is None:
                    store.mail_done(item, "sent", "", now)
                    sent += 1
                else:
                    failed += 1
                    subscribers[item.subscriber] = _failed(store, subs, item, to, outcome, now)
    except (MailServerError, MissingSecret) as exc:  # the site is built: the next run sends what waits
        log.warning("subscriptions: %s; what waits is sent by the next run", exc)
        lost += store.interrupted_mail()  # the one being handed over when the connection failed
    if sent or failed:
        log.info("subscriptions: %d messages sent, %d not", sent, failed)
    return MailDelivery(sent, failed, lost)


def _send(sender: Sender, message: EmailMessage) -> SendFailed | None:
    try:
        sender.send(message)
    except SendFailed as exc:
        return exc
    return None


def _failed(
    store: Store, subs: SubscriptionsConfig, item: MailItem, to: Subscriber, failure: SendFailed, now: datetime
) -> Subscriber | None:
    """A recipient refused: for good, a bounce (``decide.subscribers.bounced``); for now, again next
    run. Returns the subscriber as they now are (None: removed)."""
    said = hidden(failure.said, to.address)
    log.warning("subscriptions: the mail server refused %s: %s", address_hash(to.address), said)
    if not failure.permanent:
        store.mail_done(item, "pending", said, now)
        return to
    store.mail_done(item, "refused", said, now)
    outcome = bounced(to, subs.bounces)
    log.info("subscriptions: %s", outcome.said)
    saved, removed = [outcome.saved] if outcome.saved else [], [outcome.removed] if outcome.removed else []
    store.save_subscribers(saved, removed, [], now)
    return outcome.saved
