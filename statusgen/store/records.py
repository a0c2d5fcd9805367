"""What the store is given and gives back, beside the decisions' own records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from statusgen import latency
from statusgen.decide.health import RunRecord
from statusgen.decide.incidents import Incident
from statusgen.decide.reports import Credits
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.model import SET_ASIDE
from statusgen.timeutil import floor_to, to_epoch
from statusgen.vendors.model import VendorRow

NotificationKey = tuple[str, str]  # (event id, notifier)


@dataclass
class BucketRow:
    start: int
    up: int = 0
    down: int = 0
    slow: int = 0
    maintenance: int = 0
    excluded: int = 0
    hist: latency.Histogram = field(default_factory=dict)
    p50: float | None = None  # kept with the bucket, so reading it needs no histogram
    p95: float | None = None

    def add(self, other: BucketRow) -> None:
        self.up += other.up
        self.down += other.down
        self.slow += other.slow
        self.maintenance += other.maintenance
        self.excluded += other.excluded
        latency.merge(self.hist, other.hist)


@dataclass(frozen=True)
class Notification:
    """An event due to a notifier, as the outbox keeps it: ``body`` is the event's JSON."""

    event: str
    notifier: str
    queued_at: datetime
    body: str
    attempts: int = 0

    @property
    def key(self) -> NotificationKey:
        return (self.event, self.notifier)


@dataclass(frozen=True)
class SendOutcome:
    """How an attempt to send an event went, as the outbox records it."""

    key: NotificationKey
    state: str  # sent | pending | uncertain | expired
    answer: str  # what the notifier answered, without its URL
    failed: bool


@dataclass(frozen=True)
class MailEvent:
    """An event subscribers of ``service`` are told of: ``body`` is the event's JSON."""

    event: str
    service: str
    body: str


@dataclass(frozen=True)
class MailItem:
    """One message due: an event (its JSON ``body``) to one subscriber (by id)."""

    event: str
    subscriber: int
    queued_at: datetime
    body: str


@dataclass(frozen=True)
class Cycle:
    """Everything one run writes, in one transaction."""

    run: RunRecord
    results: Sequence[StoredResult]
    states: dict[str, ServiceState]
    incidents: Sequence[Incident]
    vendors: Sequence[VendorRow] = ()
    notifications: Sequence[Notification] = ()  # queued with the decisions they tell of
    months: Credits = field(default_factory=dict)  # what the run adds to each service's months
    mail: Sequence[MailEvent] = ()  # the same events, for the subscribers (each confirmed one who wants it)


def bucket_of(r: StoredResult, res: int) -> BucketRow:
    row = BucketRow(floor_to(to_epoch(r.result.ts), res))
    if r.flag == "maintenance":
        row.maintenance = 1
    elif r.flag in SET_ASIDE:
        row.excluded = 1
    elif r.result.up:
        row.up, row.slow = 1, int(r.result.slow)
    else:
        row.down = 1
    if r.flag is None and r.result.latency_ms is not None and r.result.up:
        latency.add(row.hist, [r.result.latency_ms])
    return row


def aggregate(results: Iterable[StoredResult], res: int) -> dict[tuple[str, int], BucketRow]:
    out: dict[tuple[str, int], BucketRow] = {}
    for r in results:
        row = bucket_of(r, res)
        key = (r.result.service, row.start)
        if key in out:
            out[key].add(row)
        else:
            out[key] = row
    return out


# -- the store's boundary: SQLite's and the file system's errors as StoreError ------------------


_PERCENTILES: dict[bytes, tuple[float | None, float | None]] = {}


def with_percentiles(row: tuple[Any, ...], services: set[str]) -> tuple[Any, ...]:
    """A prepared bucket row with its p50 and p95 filled from its histogram (cached per histogram);
    its service is added to ``services``."""
    services.add(row[2])
    blob = row[8] or b""
    if blob not in _PERCENTILES:
        hist = latency.decode(blob)
        _PERCENTILES[blob] = (latency.percentile(hist, 0.5), latency.percentile(hist, 0.95))
    return (*row[:9], *_PERCENTILES[blob])
