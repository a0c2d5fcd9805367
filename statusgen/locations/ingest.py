"""What each ``statusgen run`` takes from the inbox: the batches that arrived since, each verified
(``batches.decode``), stored, and removed from the inbox, in time order. A refused batch is
logged in one line naming its location and the reason, remembered for health and
``statusgen locations``, and removed: it never stops the run. A batch taken before (a replay,
or one a run stored but could not remove) changes nothing and is removed."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from statusgen.batches import NAME, BatchRefused, Expect, decode
from statusgen.config import Config
from statusgen.decide.vantage import judge_vantage
from statusgen.inbox import Inbox, InboxError, config_inbox, inbox_key
from statusgen.store import RAW_RETENTION_S, Store

log = logging.getLogger("statusgen.locations")
MAX_PER_RUN = 10_000  # batches one run takes; more wait for the next run


@dataclass
class Ingested:
    taken: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    replayed: list[str] = field(default_factory=list)
    error: str | None = None  # why the inbox could not be read; the run goes on without it


def expectations(config: Config, now: datetime) -> Expect:
    """What a batch must be to be taken: signed with the key, from a configured location, sent
    within the raw results' retention, holding only checks the configuration has."""
    checks = {s.slug: len(s.checks) for s in config.services}
    return Expect(
        key=inbox_key(config),
        checks={loc.name: checks for loc in config.locations},
        now=now,
        max_age=timedelta(seconds=RAW_RETENTION_S),
        canaries=len(config.canaries),
    )


def ingest(config: Config, store: Store, now: datetime, inbox: Inbox | None = None) -> Ingested:
    """Take what the inbox holds (``inbox``: the configuration's by default)."""
    done = Ingested()
    if not config.locations:
        return done
    inbox = inbox or config_inbox(config)
    expect = expectations(config, now)
    try:
        names = inbox.names()
    except InboxError as exc:
        log.warning("%s", exc)
        done.error = str(exc)
        return done
    by_time = sorted(names, key=lambda n: (m["at"], n) if (m := NAME.fullmatch(n)) else ("", n))[:MAX_PER_RUN]
    for name in by_time:
        location = name.split("/", 1)[0]
        try:
            batch = decode(name, inbox.get(name), expect)
        except BatchRefused as exc:
            reason = str(exc)
            log.warning("batch refused: location %r, %r: %s", location[:63], name[:200], reason)
            store.refuse_batch(location[:63], name[:200], reason, now)
            done.refused.append((name, reason))
        except InboxError as exc:
            log.warning("%s", exc)
            done.error = str(exc)
            break
        else:
            vantage = judge_vantage(batch.results, batch.canaries, config.site)
            if vantage.suspect:  # as this host's own: its failures are set aside
                log.warning("location %r: its own path looks at fault: %s", batch.location, vantage.reason)
            taken = store.take_batch(batch, now, vantage.suspect)
            (done.taken if taken else done.replayed).append(name)
        try:
            inbox.remove(name)
        except InboxError as exc:  # taken again next run: it changes nothing then
            log.warning("%s", exc)
            done.error = str(exc)
            break
    return done
