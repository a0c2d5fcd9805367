"""Notifications, exactly once: the outbox in the store, and its delivery after each run.

A run queues its events (``queued``) in the same transaction as the decisions they tell of, so
an event is never lost to a crash between deciding and recording, nor made twice by a re-run
(the outbox keeps one row per event and notifier). After the build, ``deliver`` sends what waits:

1. rows a stopped run left "sending" become uncertain: they may have arrived, and a duplicate
   is worse than a loss the log tells of; they are never sent again;
2. each notifier's waiting events are planned (``events.plan``: one message each, or a digest);
3. every row about to be sent is marked "sending", in one transaction, before anything is sent;
4. the notifiers are sent to at once, each in its own thread, each within its ``timeout``;
5. each outcome is recorded: sent; refused (waiting again, for the next run); timed out
   (uncertain, like 1).
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import orjson

from statusgen.config import Config, NotifyConfig
from statusgen.decide.incidents import Incident
from statusgen.notify.events import Event, Plan, cycle_events, plan, queue
from statusgen.notify.messages import message_of, trial_message
from statusgen.store import Notification, SendOutcome, Store
from statusgen.vendors.model import VendorObservation

if TYPE_CHECKING:  # notify.send imports Apprise, slow to import: only a site with notifiers pays for it
    from statusgen.notify.send import Answer

log = logging.getLogger("statusgen")
GRACE_S = 2.0  # past the longest timeout, a notifier's thread is no longer waited for


def run_events(
    store: Store,
    config: Config,
    before: Mapping[str, Incident],
    changed: Sequence[Incident],
    observations: Mapping[str, VendorObservation],
    statuses: Mapping[str, str],
    now: datetime,
) -> list[Event]:
    """The events of a run, for the notifiers and the subscribers; read from the store before the
    run's decisions are saved. ``statuses``: each service's status as the run decided it."""
    if not config.notifiers and config.subscriptions is None:
        return []
    views = {s: orjson.loads(r.view_json) if r.view_json else None for s, r in store.vendor_rows().items()}
    last = store.last_finished_run()
    since = last.finished_at if last and last.finished_at else now - timedelta(seconds=config.site.interval)
    return cycle_events(config, before, changed, views, observations, statuses, since, now)


def queued(config: Config, events: Sequence[Event], now: datetime) -> list[Notification]:
    """The outbox rows of a run's events: one per event and notifier that wants it."""
    return queue(config, events, now) if config.notifiers else []


@dataclass(frozen=True)
class Delivery:
    sent: int  # events delivered
    failed: int  # events whose sending failed or timed out
    uncertain: int  # events a stopped run left half-sent


def deliver(store: Store, config: Config, now: datetime, env: Mapping[str, str] | None = None) -> Delivery:
    """Send what waits in the outbox (see the module's steps) and record how it went."""
    if not config.notifiers:
        return Delivery(0, 0, 0)
    env = os.environ if env is None else env
    lost = store.interrupted_notifications()
    if lost:
        log.warning("notify: %d events were being sent when a run stopped; they are not sent again", lost)
    plans = _plans(store, config, now)
    store.notifications_sending(n.key for p in plans.values() for batch in p.batches for n in batch)
    outcomes = _send_all(config, plans, now, env)
    store.notifications_done(outcomes, now)
    sent = sum(1 for o in outcomes if o.state == "sent")
    return Delivery(sent, sum(1 for o in outcomes if o.failed), lost)


def _plans(store: Store, config: Config, now: datetime) -> dict[str, Plan]:
    """Each notifier's plan; the events of a notifier no longer configured, and those that waited
    too long, are given up at once."""
    waiting: dict[str, list[Notification]] = defaultdict(list)
    for n in store.waiting_notifications():
        waiting[n.notifier].append(n)
    names = {n.name for n in config.notifiers}
    gone = [n for name, rows in waiting.items() if name not in names for n in rows]
    plans = {n.name: plan(n, waiting.get(n.name, []), now) for n in config.notifiers}
    dropped = gone + [n for p in plans.values() for n in p.dropped]
    if dropped:
        log.warning("notify: %d events waited too long or have no notifier any more; given up", len(dropped))
        store.notifications_done([SendOutcome(n.key, "expired", "given up", False) for n in dropped], now)
    return {name: p for name, p in plans.items() if p.batches}


def _send_all(config: Config, plans: Mapping[str, Plan], now: datetime, env: Mapping[str, str]) -> list[SendOutcome]:
    """Every notifier's batches, the notifiers at once; a thread not done in time is not waited for."""
    if not plans:
        return []
    import statusgen.notify.send  # noqa: F401  (here, before the notifiers' time starts: see TYPE_CHECKING)

    notifiers = {n.name: n for n in config.notifiers}
    pool = ThreadPoolExecutor(max_workers=len(plans), thread_name_prefix="notify")
    futures = {pool.submit(_send_plan, config, notifiers[name], p, now, env): name for name, p in plans.items()}
    done, _ = wait(futures, timeout=max(notifiers[name].timeout for name in plans) + GRACE_S)
    pool.shutdown(wait=False, cancel_futures=True)
    outcomes: list[SendOutcome] = []
    for future, name in futures.items():
        if future in done:
            outcomes += future.result()
        else:
            log.warning("notify %s: no answer in time; what it was sent may have arrived", name)
            outcomes += [
                SendOutcome(n.key, "uncertain", "no answer in time", True) for b in plans[name].batches for n in b
            ]
    return outcomes


def _send_plan(
    config: Config, notifier: NotifyConfig, p: Plan, now: datetime, env: Mapping[str, str]
) -> list[SendOutcome]:
    """One notifier's messages, in order, within its timeout: those there is no time left for
    wait for the next run."""
    from statusgen.notify.send import send

    deadline = time.monotonic() + notifier.timeout
    outcomes = []
    for batch in p.batches:
        left = deadline - time.monotonic()
        if left <= 0:
            outcomes += [SendOutcome(n.key, "pending", "not tried: no time left in this run", False) for n in batch]
            continue
        message = message_of(config, [Event.from_json(orjson.loads(n.body)) for n in batch])
        answer = send(config, notifier, message, now, env, left)
        _log(answer, len(batch))
        state = "sent" if answer.sent else "uncertain" if answer.timed_out else "pending"
        outcomes += [SendOutcome(n.key, state, answer.said, not answer.sent) for n in batch]
    return outcomes


def _log(answer: Answer, events: int) -> None:
    what = f"{events} events in a digest" if events > 1 else "1 event"
    if answer.sent:
        log.info("notify %s: sent %s", answer.notifier, what)
    else:
        log.warning("notify %s: could not send %s: %s", answer.notifier, what, answer.said)


def try_notifiers(config: Config, names: Sequence[str], now: datetime) -> list[Answer]:
    """``statusgen notify --test``: a test message to each notifier named (all when none), at once."""
    from statusgen.notify.send import send

    chosen = [n for n in config.notifiers if not names or n.name in names]
    if not chosen:
        return []
    with ThreadPoolExecutor(max_workers=len(chosen), thread_name_prefix="notify") as pool:
        return list(
            pool.map(lambda n: send(config, n, trial_message(config, n.name, now), now, os.environ, n.timeout), chosen)
        )
