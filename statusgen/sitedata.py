"""Gather: what a build needs, read from the store in one place.

``gather`` reads what the whole site needs; each service's histories are
read as the service is rendered, through ``HistorySource`` (which also
keeps their closed points for the next build). The documents, feeds and
pages are pure functions of the ``SiteData`` and of those histories.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, overload

import orjson

from .config import Config, ServiceConfig
from .health import RunRecord
from .history import COARSER, RANGES, Closed, Range, Unbalanced, build_history, incidents_key, reusable, window
from .incidents import Incident
from .state import ServiceState
from .store import Store, VendorRow


class Incidents(Sequence[Incident]):
    """statusgen's incidents, newest first, as the store lists them: each is made from its JSON
    record when it is first asked for, so a build that forks makes each of its incidents in
    the process that uses it, and a service's key is made of its records' text as stored."""

    def __init__(self, records: Iterable[tuple[str, bool, str]]):
        """``records``: (service, open, JSON record) of each incident, newest first."""
        self._records = list(records)
        self._made: dict[int, Incident] = {}

    @cached_property
    def _by_service(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for n, (service, _, _) in enumerate(self._records):
            out.setdefault(service, []).append(n)
        return out

    def _make(self, n: int) -> Incident:
        made = self._made.get(n)
        if made is None:
            made = self._made[n] = Incident.from_json(orjson.loads(self._records[n][2]))
        return made

    def of(self, slug: str) -> list[Incident]:
        """The incidents of one service, newest first."""
        return [self._make(n) for n in self._by_service.get(slug, [])]

    def records_of(self, slug: str) -> list[str]:
        """The JSON records of one service's incidents as stored, newest first (what it is keyed by)."""
        return [self._records[n][2] for n in self._by_service.get(slug, [])]

    def records(self) -> list[str]:
        """Every JSON record as stored, newest first."""
        return [record for _, _, record in self._records]

    def open(self) -> list[Incident]:
        """The open incidents, newest first."""
        return [self._make(n) for n, (_, is_open, _) in enumerate(self._records) if is_open]

    def open_count(self) -> int:
        return sum(1 for _, is_open, _ in self._records if is_open)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Incident]:
        return (self._make(n) for n in range(len(self._records)))

    @overload
    def __getitem__(self, index: int) -> Incident: ...
    @overload
    def __getitem__(self, index: slice) -> list[Incident]: ...

    def __getitem__(self, index: int | slice) -> Incident | list[Incident]:
        if isinstance(index, slice):
            return [self._make(n) for n in range(len(self._records))[index]]
        return self._make(range(len(self._records))[index])


@dataclass(frozen=True)
class SiteData:
    config: Config
    now: datetime                                  # used only to judge staleness
    states: dict[str, ServiceState]
    incidents: Incidents                           # newest first
    last_run: RunRecord | None                     # the last finished run
    last_day_since: datetime                       # the last day of results starts here (rows: ``history``)
    history: HistorySource                         # each service's histories, read when rendered
    epoch: datetime                                # when this site first ran; dates the feed ids
    vendors: dict[str, VendorRow] = field(default_factory=dict)  # service -> its vendor source as stored
    versions: dict[str, int] = field(default_factory=dict)       # service -> its measurements version

    def state(self, slug: str) -> ServiceState:
        return self.states.get(slug) or ServiceState()

    def incidents_of(self, slug: str) -> list[Incident]:
        return self.incidents.of(slug)

    def service(self, slug: str) -> ServiceConfig:
        return self.config.by_slug[slug]


def data_time(data: SiteData) -> datetime:
    """The time the data holds as of: the last finished run, else the newest observation."""
    if data.last_run and data.last_run.finished_at:
        return data.last_run.finished_at
    observed = [s.observed_at for s in data.states.values() if s.observed_at]
    return max(observed) if observed else data.now


class HistorySource:
    """A build's reads of a service's measurements as the service is rendered (by the process
    rendering it: a forked one reads through a connection of its own): its last day of
    results, its buckets and kept points; and its writes of the points that closed, and of
    what the pages drew of them (saved in batches, so a build holds a few services' worth at
    once; a batch is saved when the next service is read, after the pages of its services)."""

    BATCH = 128

    def __init__(self, store: Store):
        self.store = store
        self.pending: list[tuple[str, int, Closed]] = []
        # kept points carried as they were: what their charts were as read, to save them if redrawn
        self.watched: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = []

    def last_day(self, slug: str, since: datetime) -> tuple[int, str]:
        """The service's results from ``since`` on: their count and JSON rows."""
        return self.store.last_day_json(slug, since)

    def last_day_count(self, slug: str, since: datetime) -> int:
        """The count of ``last_day``, without its rows."""
        return self.store.last_day_count(slug, since)

    def histories(self, slug: str, as_of: datetime, incidents: list[Incident]) -> dict[str, dict[str, Any]]:
        """The service's four history documents, by range name."""
        if len(self.pending) + len(self.watched) >= self.BATCH:
            self.flush()
        cached, key = self.store.history_cache(slug), incidents_key(incidents)
        out = {}
        for name, rng in RANGES.items():
            res = rng.resolution_s
            closed = cached.get(res)
            if closed is not None and not reusable(closed, rng, as_of, key):
                closed = None
            try:
                out[name], kept = self._history(slug, rng, as_of, incidents, key, closed)
            except Unbalanced:              # kept points that do not add up (never by our own writes): anew
                closed = None
                out[name], kept = self._history(slug, rng, as_of, incidents, key, None)
            if closed is None or (kept.first, kept.upto) != (closed.first, closed.upto):
                self.pending.append((slug, res, kept))
            else:
                self.watched.append((slug, res, kept.drawn, dict(kept.drawn)))
        return out

    def _history(self, slug: str, rng: Range, as_of: datetime, incidents: list[Incident], key: str,
                 closed: Closed | None) -> tuple[dict[str, Any], Closed]:
        span, res = self.store.bucket_span, rng.resolution_s
        start, end = window(rng, as_of)
        if closed is not None:
            fine = (span(slug, res, closed.first, start) if closed.first < start else []) + \
                span(slug, res, closed.upto, end)
            return build_history(slug, rng, as_of, incidents, key, closed, fine)
        c = COARSER[res]
        return build_history(slug, rng, as_of, incidents, key, None, span(slug, res, start, end),
                             span(slug, c, start, end - res) if c else [])

    def flush(self) -> None:
        redrawn = [(slug, res, now) for slug, res, now, was in self.watched if _changed(now, was)]
        if self.pending or redrawn:
            self.store.save_history_cache(self.pending, redrawn)
        self.pending.clear()
        self.watched.clear()


def _changed(drawn: dict[str, Any], was: dict[str, Any]) -> bool:
    """Whether an entry of ``drawn`` was replaced since ``was`` was copied from it."""
    return drawn.keys() != was.keys() or any(v is not was[k] for k, v in drawn.items())


def gather(store: Store, config: Config, now: datetime) -> SiteData:
    last_run = store.last_finished_run()
    anchor = last_run.finished_at if last_run and last_run.finished_at else now
    since = anchor - timedelta(days=1)
    return SiteData(
        config=config, now=now, states=store.states(), incidents=Incidents(store.incident_records()), last_run=last_run,
        last_day_since=since,
        history=HistorySource(store),
        epoch=store.first_run_started() or now, vendors=store.vendor_rows(), versions=store.data_versions(),
    )
